/**
 * The histograms' brush (served at /api/explore/static/histogram.js, loaded only by pages that
 * draw a histogram): a drag across a histogram selects whole bins and filters the view to their
 * range, by going to the view's own URL with two filter rows added (from the first bin's lower
 * edge, up to the last bin's upper edge: exclusive, or inclusive for the histogram's last bin,
 * as the bars' own links have it). A press and release on one bar is left to that bar's link,
 * so without this script, or without a drag, the bars filter as before. It reads only data
 * attributes, adds one SVG rectangle for the selection and writes no HTML.
 *
 * Plain ES2017 in a string: it runs in the browser as is, without a build step.
 */
export const HISTOGRAM_SCRIPT = String.raw`(function () {
  'use strict';
  var SVG_NS = 'http://www.w3.org/2000/svg';

  function brush(svg) {
    var edges = JSON.parse(svg.getAttribute('data-edges') || '[]');
    var bins = edges.length - 1;
    if (bins < 1) return;
    var isDate = svg.getAttribute('data-kind') === 'date';
    var field = svg.getAttribute('data-field');
    var box = svg.viewBox.baseVal;
    var binWidth = box.width / bins;
    var band = null;
    var start = null;
    var dragging = false;
    var swallowClick = false;

    // Vertical scrolling stays with the page on touch screens; sideways moves are the brush's.
    svg.style.touchAction = 'pan-y';

    function binAt(event) {
      var rect = svg.getBoundingClientRect();
      var x = ((event.clientX - rect.left) / Math.max(1, rect.width)) * box.width;
      return Math.max(0, Math.min(bins - 1, Math.floor(x / binWidth)));
    }

    function edge(value) {
      return isDate ? JSON.stringify({ $date: new Date(value).toISOString() }) : JSON.stringify(value);
    }

    function show(a, b) {
      if (band === null) {
        band = document.createElementNS(SVG_NS, 'rect');
        band.setAttribute('fill', '#2c6dac');
        band.setAttribute('fill-opacity', '0.25');
        band.setAttribute('pointer-events', 'none');
        band.setAttribute('data-testid', 'histogram-brush');
        svg.appendChild(band);
      }
      var lo = Math.min(a, b);
      var hi = Math.max(a, b);
      band.setAttribute('x', String(lo * binWidth));
      band.setAttribute('y', '0');
      band.setAttribute('width', String((hi - lo + 1) * binWidth));
      band.setAttribute('height', String(box.height));
    }

    function filterTo(lo, hi) {
      var url = new URL(svg.getAttribute('data-view-href'), window.location.href);
      url.searchParams.delete('page');
      url.searchParams.append('f', field);
      url.searchParams.append('op', 'gte');
      url.searchParams.append('v', edge(edges[lo]));
      url.searchParams.append('f', field);
      url.searchParams.append('op', hi === bins - 1 ? svg.getAttribute('data-last-op') || 'lte' : 'lt');
      url.searchParams.append('v', edge(edges[hi + 1]));
      window.location.assign(url.pathname + url.search);
    }

    svg.addEventListener('pointerdown', function (event) {
      if (event.button !== 0) return;
      start = binAt(event);
      dragging = false;
    });
    svg.addEventListener('pointermove', function (event) {
      if (start === null) return;
      var here = binAt(event);
      if (!dragging && here === start) return;
      if (!dragging) {
        dragging = true;
        // From here on the drag is the brush's, wherever the pointer goes.
        svg.setPointerCapture(event.pointerId);
      }
      show(start, here);
    });
    svg.addEventListener('pointerup', function (event) {
      if (start === null) return;
      var from = start;
      start = null;
      if (!dragging) return;
      dragging = false;
      swallowClick = true;
      var here = binAt(event);
      filterTo(Math.min(from, here), Math.max(from, here));
    });
    svg.addEventListener('pointercancel', function () {
      start = null;
      dragging = false;
      if (band !== null) band.setAttribute('width', '0');
    });
    // A drag ends over some bar: its link must not follow the brush's own navigation.
    svg.addEventListener('click', function (event) {
      if (!swallowClick) return;
      swallowClick = false;
      event.preventDefault();
    }, true);
    // Links are draggable; the brush is the drag here.
    svg.addEventListener('dragstart', function (event) { event.preventDefault(); });
  }

  Array.prototype.forEach.call(document.querySelectorAll('svg[data-brush]'), brush);
})();
`;
