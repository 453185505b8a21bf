/**
 * The histograms' brush (loaded only by pages that draw a histogram): a drag across a histogram
 * selects whole bins and filters the view to their range, by going to the view's own URL with
 * two filter rows added (from the first bin's lower edge, up to the last bin's upper edge:
 * exclusive, or inclusive for the histogram's last bin, as the bars' own links have it). A press
 * and release on one bar is left to that bar's link, so without this script, or without a drag,
 * the bars filter as before. It reads only data attributes, adds one SVG rectangle for the
 * selection and writes no HTML.
 */
export {};

const SVG_NS = 'http://www.w3.org/2000/svg';

function brush(svg: SVGSVGElement): void {
  const edges = JSON.parse(svg.getAttribute('data-edges') || '[]') as (number | string)[];
  const bins = edges.length - 1;
  if (bins < 1) return;
  const isDate = svg.getAttribute('data-kind') === 'date';
  const field = svg.getAttribute('data-field') ?? '';
  const box = svg.viewBox.baseVal;
  const binWidth = box.width / bins;
  let band: SVGRectElement | null = null;
  let start: number | null = null;
  let dragging = false;
  let swallowClick = false;

  // Vertical scrolling stays with the page on touch screens; sideways moves are the brush's.
  svg.style.touchAction = 'pan-y';

  function binAt(event: PointerEvent): number {
    const rect = svg.getBoundingClientRect();
    const x = ((event.clientX - rect.left) / Math.max(1, rect.width)) * box.width;
    return Math.max(0, Math.min(bins - 1, Math.floor(x / binWidth)));
  }

  function edge(value: number | string | undefined): string {
    return isDate ? JSON.stringify({ $date: new Date(value ?? Number.NaN).toISOString() }) : JSON.stringify(value);
  }

  function show(a: number, b: number): void {
    if (band === null) {
      band = document.createElementNS(SVG_NS, 'rect');
      band.setAttribute('fill', '#2c6dac');
      band.setAttribute('fill-opacity', '0.25');
      band.setAttribute('pointer-events', 'none');
      band.setAttribute('data-testid', 'histogram-brush');
      svg.appendChild(band);
    }
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    band.setAttribute('x', String(lo * binWidth));
    band.setAttribute('y', '0');
    band.setAttribute('width', String((hi - lo + 1) * binWidth));
    band.setAttribute('height', String(box.height));
  }

  function filterTo(lo: number, hi: number): void {
    const url = new URL(svg.getAttribute('data-view-href') ?? '', window.location.href);
    url.searchParams.delete('page');
    url.searchParams.append('f', field);
    url.searchParams.append('op', 'gte');
    url.searchParams.append('v', edge(edges[lo]));
    url.searchParams.append('f', field);
    url.searchParams.append('op', hi === bins - 1 ? svg.getAttribute('data-last-op') || 'lte' : 'lt');
    url.searchParams.append('v', edge(edges[hi + 1]));
    window.location.assign(url.pathname + url.search);
  }

  svg.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    start = binAt(event);
    dragging = false;
  });
  svg.addEventListener('pointermove', (event) => {
    if (start === null) return;
    const here = binAt(event);
    if (!dragging && here === start) return;
    if (!dragging) {
      dragging = true;
      // From here on the drag is the brush's, wherever the pointer goes.
      svg.setPointerCapture(event.pointerId);
    }
    show(start, here);
  });
  svg.addEventListener('pointerup', (event) => {
    if (start === null) return;
    const from = start;
    start = null;
    if (!dragging) return;
    dragging = false;
    swallowClick = true;
    const here = binAt(event);
    filterTo(Math.min(from, here), Math.max(from, here));
  });
  svg.addEventListener('pointercancel', () => {
    start = null;
    dragging = false;
    if (band !== null) band.setAttribute('width', '0');
  });
  // A drag ends over some bar: its link must not follow the brush's own navigation.
  svg.addEventListener(
    'click',
    (event) => {
      if (!swallowClick) return;
      swallowClick = false;
      event.preventDefault();
    },
    true,
  );
  // Links are draggable; the brush is the drag here.
  svg.addEventListener('dragstart', (event) => event.preventDefault());
}

document.querySelectorAll<SVGSVGElement>('svg[data-brush]').forEach(brush);
