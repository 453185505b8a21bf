/**
 * The chart view's script (served at /api/explore/static/chart.js): draws the points the page
 * carries in `data-points` with uPlot (loaded just before it), and turns a drag across the chart
 * (a brush over x) into filter rows for that range, by going to the view's own URL with them
 * added. It reads only data attributes and writes no HTML.
 *
 * Plain ES2017 in a string: it runs in the browser as is, without a build step.
 */
export const CHART_SCRIPT = String.raw`(function () {
  'use strict';
  var el = document.getElementById('explorer-chart');
  if (el === null || typeof uPlot === 'undefined') return;
  var data = JSON.parse(el.getAttribute('data-points') || '[[],[]]');
  var isDate = el.getAttribute('data-x-kind') === 'date';
  var xField = el.getAttribute('data-x-field');
  // One series per value of the split field (or the y field alone), in the page's order.
  var labels = JSON.parse(el.getAttribute('data-series') || '[]');
  if (labels.length === 0) labels = [el.getAttribute('data-y-label')];
  var COLORS = ['#2c6dac', '#d9822b', '#2e9e5b', '#c23b3b', '#8a5cc2', '#8c6d46', '#d45fa8', '#6b7b8c'];

  function edge(value) {
    return isDate ? JSON.stringify({ $date: new Date(value * 1000).toISOString() }) : JSON.stringify(value);
  }

  function filterTo(lo, hi) {
    var url = new URL(el.getAttribute('data-view-href'), window.location.href);
    url.searchParams.delete('page');
    url.searchParams.append('f', xField);
    url.searchParams.append('op', 'gte');
    url.searchParams.append('v', edge(lo));
    url.searchParams.append('f', xField);
    url.searchParams.append('op', 'lte');
    url.searchParams.append('v', edge(hi));
    window.location.assign(url.pathname + url.search);
  }

  var options = {
    width: Math.max(320, Math.min(1200, el.clientWidth || 900)),
    height: 420,
    scales: { x: { time: isDate } },
    // Dates read in UTC, as the table, the histograms and the filters write them (uPlot would
    // use the browser's time zone, and put a reading of late 30 June in July east of Greenwich).
    tzDate: function (seconds) { return uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'); },
    cursor: { drag: { x: true, y: false, setScale: false } },
    legend: { show: true },
    series: [{ label: el.getAttribute('data-x-label') }].concat(labels.map(function (label, i) {
      var color = COLORS[i % COLORS.length];
      return {
        label: label,
        stroke: color,
        fill: color,
        paths: function () { return null; },
        points: { show: true, size: 4, stroke: color, fill: color }
      };
    })),
    hooks: {
      setSelect: [function (u) {
        if (u.select.width < 2) return;
        var lo = u.posToVal(u.select.left, 'x');
        var hi = u.posToVal(u.select.left + u.select.width, 'x');
        filterTo(lo, hi);
      }]
    }
  };
  el.textContent = '';
  el.setAttribute('data-drawn', 'true');
  new uPlot(options, data, el);
})();
`;
