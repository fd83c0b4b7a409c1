import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresSubscriptionStore } from '../../../src/adapters/postgres/subscriptions/subscription-store.ts';
import {
  matchStoredChanges,
  sendDueDeliveries,
} from '../../../src/application/subscriptions/deliver-subscriptions.ts';
import { GROUP, near, type Point, setUp } from '../../helpers/location-privacy.ts';
import { changesVisible } from '../../helpers/change-log.ts';
import { deliveryDeps, webhookReceiver } from '../../helpers/webhook-receiver.ts';

// Location privacy in webhook deliveries (issue 39 §2 with issue 38 §4): a subscriber who does not
// write the dataset gets the generalised location (the cell's centre), exactly as /api/v1/changes
// shows it (the same projection); the dataset's owner gets the exact point.

t.test('a privacy-generalised dataset delivers generalised locations to non-writers', async (t) => {
  const { db, owner, stranger, centre } = await setUp(t);
  const store = postgresSubscriptionStore(db.pool);
  const filter = {
    catalog: null,
    datasets: ['sightings'],
    bounds: null,
    dates: { from: null, to: null },
    dateField: { kind: 'eventTimestamp' as const },
  };
  const receivers = { owner: await webhookReceiver(t), stranger: await webhookReceiver(t) };
  for (const [who, user] of [
    ['owner', owner],
    ['stranger', stranger],
  ] as const) {
    const secret = `whsec_${Buffer.from(`secret of the ${who}!!`).toString('base64')}`;
    receivers[who].useSecret(secret);
    const made = await store.create(
      user.id,
      null,
      { name: who, filter, channel: { kind: 'webhook', url: receivers[who].url }, viewCode: null },
      secret,
      10,
    );
    t.ok(made);
  }
  const exact: Point = [GROUP[0]![0] + 0.0001, GROUP[0]![1] + 0.0001];
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select id, catalog_id, 'new', 'new sighting', '{}'::jsonb,
           st_setsrid(st_makepoint(${exact[0]}, ${exact[1]}), 4326), '2025-06-01'
    from datasets where slug = 'sightings'`);
  const deps = deliveryDeps(db.pool);
  await changesVisible(db.pool);
  await matchStoredChanges(deps);
  t.equal(await sendDueDeliveries(deps, 10), 2, 'one delivery each');

  const [toStranger] = receivers.stranger.received;
  const [toOwner] = receivers.owner.received;
  t.ok(toStranger?.verified && toOwner?.verified, 'both signed');
  const seen = (r: typeof toOwner): Point => {
    const location = r?.body.changes[0]?.event?.location;
    return [location?.longitude ?? NaN, location?.latitude ?? NaN];
  };
  t.ok(near(seen(toStranger), centre), 'the stranger gets the cell centre');
  t.notOk(near(seen(toStranger), exact), 'not the exact point');
  t.ok(near(seen(toOwner), exact), 'the owner gets the exact point');
});
