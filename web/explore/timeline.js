// The timeline: an SVG histogram of /api/v1/events/temporal. Dragging across it selects a range of
// whole buckets (the brush); the page turns that into startDate/endDate for the map and the list.

import { bucketLabel, formatCount, formatDate, formatDateTime } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 110;
const AXIS = 18;
const PAD = 8;

/** @typedef {{ date: string, dateEnd: string, count: number }} Bucket */

/**
 * @param {string} name
 * @param {Record<string, string | number>} attributes
 */
function svg(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

export class Timeline {
  /**
   * @param {HTMLElement} container
   * @param {(range: { startDate: string, endDate: string }) => void} onBrush
   */
  constructor(container, onBrush) {
    this.container = container;
    this.onBrush = onBrush;
    /** @type {Bucket[]} */
    this.buckets = [];
    this.total = 0;
    /** @type {{ start: number, end: number } | null} */
    this.selection = null;
    /** @type {number | null} */
    this.dragFrom = null;
    new ResizeObserver(() => this.draw()).observe(container);
  }

  /**
   * @param {Bucket[]} buckets
   * @param {number} total
   * @param {{ start: number, end: number } | null} selection the selected dates, in ms since the epoch
   */
  render(buckets, total, selection) {
    this.buckets = buckets;
    this.total = total;
    this.selection = selection;
    this.draw();
  }

  width() {
    return Math.max(200, this.container.clientWidth);
  }

  /** @param {number} x */
  bucketAt(x) {
    const inner = this.width() - 2 * PAD;
    const index = Math.floor(((x - PAD) / inner) * this.buckets.length);
    return Math.max(0, Math.min(this.buckets.length - 1, index));
  }

  draw() {
    const width = this.width();
    const root = svg('svg', {
      width,
      height: HEIGHT,
      viewBox: `0 0 ${width} ${HEIGHT}`,
      role: 'img',
      class: 'histogram',
      'data-total': this.total,
      'data-buckets': this.buckets.length,
    });
    const buckets = this.buckets;
    const label =
      buckets.length === 0
        ? 'No events in view'
        : `${formatCount(this.total)} events from ${formatDate(buckets[0]?.date ?? '')} to ${formatDate(buckets.at(-1)?.dateEnd ?? '')}; drag to select dates`;
    root.setAttribute('aria-label', label);
    const title = svg('title', {});
    title.textContent = label;
    root.append(title);
    if (buckets.length > 0) {
      const inner = width - 2 * PAD;
      const step = inner / buckets.length;
      const max = Math.max(1, ...buckets.map((bucket) => bucket.count));
      const plot = HEIGHT - AXIS - 4;
      const first = buckets[0];
      const bucketMs = first ? Date.parse(first.dateEnd) - Date.parse(first.date) : Infinity;
      const subDay = bucketMs < 86_400_000;
      buckets.forEach((bucket, index) => {
        const height = bucket.count === 0 ? 0 : Math.max(2, (bucket.count / max) * plot);
        const start = Date.parse(bucket.date);
        const inside =
          !this.selection ||
          (start <= this.selection.end && Date.parse(bucket.dateEnd) > this.selection.start);
        const bar = svg('rect', {
          x: PAD + index * step + (step > 4 ? 1 : 0),
          y: HEIGHT - AXIS - height,
          width: Math.max(1, step - (step > 4 ? 2 : 0)),
          height,
          class: inside ? 'bar' : 'bar outside',
          'data-count': bucket.count,
        });
        const tip = svg('title', {});
        const when = subDay ? formatDateTime : formatDate;
        tip.textContent = `${when(bucket.date)} – ${when(bucket.dateEnd)}: ${formatCount(bucket.count)}`;
        bar.append(tip);
        root.append(bar);
      });
      root.append(
        svg('line', { x1: PAD, x2: width - PAD, y1: HEIGHT - AXIS, y2: HEIGHT - AXIS, class: 'axis' }),
      );
      const ticks = Math.max(2, Math.min(8, Math.floor(width / 120)));
      for (let i = 0; i <= ticks; i++) {
        const index = Math.min(buckets.length - 1, Math.round((i / ticks) * (buckets.length - 1)));
        const bucket = buckets[index];
        if (!bucket) continue;
        const x = PAD + index * step;
        const text = svg('text', {
          x,
          y: HEIGHT - 4,
          class: 'tick',
          'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle',
        });
        text.textContent = bucketLabel(bucket.date, bucketMs);
        root.append(text);
      }
      const brush = svg('rect', {
        class: 'brush',
        x: 0,
        y: 0,
        width: 0,
        height: HEIGHT - AXIS,
        visibility: 'hidden',
      });
      root.append(brush);
      root.addEventListener('pointerdown', (event) => {
        root.setPointerCapture(event.pointerId);
        this.dragFrom = this.bucketAt(this.localX(root, event));
        this.showBrush(brush, this.dragFrom, this.dragFrom);
      });
      root.addEventListener('pointermove', (event) => {
        if (this.dragFrom === null) return;
        this.showBrush(brush, this.dragFrom, this.bucketAt(this.localX(root, event)));
      });
      root.addEventListener('pointerup', (event) => {
        if (this.dragFrom === null) return;
        const to = this.bucketAt(this.localX(root, event));
        const from = this.dragFrom;
        this.dragFrom = null;
        const first = buckets[Math.min(from, to)];
        const last = buckets[Math.max(from, to)];
        if (!first || !last) return;
        this.onBrush({
          startDate: first.date,
          // endDate is inclusive and buckets are half-open: end one millisecond before the next bucket.
          endDate: new Date(Date.parse(last.dateEnd) - 1).toISOString(),
        });
      });
    }
    this.container.replaceChildren(root);
  }

  /** @param {Element} root @param {PointerEvent} event */
  localX(root, event) {
    return event.clientX - root.getBoundingClientRect().left;
  }

  /** @param {Element} brush @param {number} a @param {number} b */
  showBrush(brush, a, b) {
    const step = (this.width() - 2 * PAD) / this.buckets.length;
    brush.setAttribute('x', String(PAD + Math.min(a, b) * step));
    brush.setAttribute('width', String((Math.abs(a - b) + 1) * step));
    brush.setAttribute('visibility', 'visible');
  }
}
