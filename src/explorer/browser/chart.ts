/**
 * The chart view's script: draws the points the page carries in `data-points` with uPlot
 * (loaded just before it), and turns a drag across the chart (a brush over x) into filter rows
 * for that range, by going to the view's own URL with them added. It reads only data attributes
 * and writes no HTML.
 */
import type UPlot from 'uplot';

const COLORS = ['#2c6dac', '#d9822b', '#2e9e5b', '#c23b3b', '#8a5cc2', '#8c6d46', '#d45fa8', '#6b7b8c'];

function draw(el: HTMLElement): void {
  const data = JSON.parse(el.getAttribute('data-points') || '[[],[]]') as UPlot.AlignedData;
  const isDate = el.getAttribute('data-x-kind') === 'date';
  const xField = el.getAttribute('data-x-field') ?? '';
  // One series per value of the split field (or the y field alone), in the page's order.
  let labels = JSON.parse(el.getAttribute('data-series') || '[]') as string[];
  if (labels.length === 0) labels = [el.getAttribute('data-y-label') ?? ''];

  function edge(value: number): string {
    return isDate ? JSON.stringify({ $date: new Date(value * 1000).toISOString() }) : JSON.stringify(value);
  }

  function filterTo(lo: number, hi: number): void {
    const url = new URL(el.getAttribute('data-view-href') ?? '', window.location.href);
    url.searchParams.delete('page');
    url.searchParams.append('f', xField);
    url.searchParams.append('op', 'gte');
    url.searchParams.append('v', edge(lo));
    url.searchParams.append('f', xField);
    url.searchParams.append('op', 'lte');
    url.searchParams.append('v', edge(hi));
    window.location.assign(url.pathname + url.search);
  }

  const options: UPlot.Options = {
    width: Math.max(320, Math.min(1200, el.clientWidth || 900)),
    height: 420,
    scales: { x: { time: isDate } },
    // Dates read in UTC, as the table, the histograms and the filters write them (uPlot would
    // use the browser's time zone, and put a reading of late 30 June in July east of Greenwich).
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
    cursor: { drag: { x: true, y: false, setScale: false } },
    legend: { show: true },
    series: [{ label: el.getAttribute('data-x-label') ?? '' }].concat(
      labels.map((label, i) => {
        const color = COLORS[i % COLORS.length];
        return {
          label,
          stroke: color,
          fill: color,
          paths: () => null,
          points: { show: true, size: 4, stroke: color, fill: color },
        };
      }),
    ),
    hooks: {
      setSelect: [
        (u) => {
          if (u.select.width < 2) return;
          const lo = u.posToVal(u.select.left, 'x');
          const hi = u.posToVal(u.select.left + u.select.width, 'x');
          filterTo(lo, hi);
        },
      ],
    },
  };
  el.textContent = '';
  el.setAttribute('data-drawn', 'true');
  new uPlot(options, data, el);
}

const chart = document.getElementById('explorer-chart');
if (chart !== null && typeof uPlot !== 'undefined') draw(chart);
