// The HTML markers of the Explore page's marker mode: buttons, so Tab and screen readers reach the
// clusters and events (the vector tiles are drawn on the canvas, where they cannot).
import { element, formatCount, shortCount } from './format.js';

/**
 * A cluster's or an event's button (its click is the caller's).
 * @param {any} props the feature's properties (/api/v1/events/geo)
 * @param {number} count events in it
 * @param {number} size 1-5, its quintile among the clusters in view
 * @param {boolean} exact at a zoom where a cluster is one spot, listed rather than zoomed into
 */
export function markerButton(props, count, size, exact) {
  return props.type === 'event-cluster'
    ? element(
        'button',
        {
          type: 'button',
          class: `cluster size-${size}`,
          'aria-label': `${formatCount(count)} events here; ${exact ? 'list them' : 'zoom in'}`,
          'data-count': String(count),
        },
        [shortCount(count)],
      )
    : element('button', {
        type: 'button',
        class: 'point',
        'aria-label': `Event: ${props.title ?? props.id}`,
        title: String(props.title ?? ''),
        'data-count': '1',
        'data-id': String(props.id),
      });
}
