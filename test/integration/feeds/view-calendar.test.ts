import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, insertAccessFixture } from '../../helpers/accounts.ts';

// The iCalendar feed of a saved view (issue 39 §2) through the whole service, read back with a
// strict RFC 5545 parser written here: CRLF only, no line over 75 octets, folded lines unfolded,
// TEXT values with only the escapes §3.3.11 allows, every VEVENT with UID, DTSTAMP and DTSTART.

type Component = { name: string; props: Array<{ name: string; value: string }>; children: Component[] };

const TEXT_PROPERTIES = new Set(['SUMMARY', 'DESCRIPTION', 'CATEGORIES', 'X-WR-CALNAME']);

function unescapeText(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i += 1) {
    const c = value[i] as string;
    if (c === ';' || c === ',') throw new Error(`unescaped "${c}" in TEXT: ${value}`);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = value[i + 1];
    i += 1;
    if (next === 'n' || next === 'N') out += '\n';
    else if (next === '\\' || next === ';' || next === ',') out += next;
    else throw new Error(`bad escape \\${String(next)} in TEXT: ${value}`);
  }
  return out;
}

function parseCalendar(text: string): Component {
  if (!text.endsWith('\r\n')) throw new Error('the last line does not end in CRLF');
  const raw = text.slice(0, -2).split('\r\n');
  for (const line of raw) {
    if (/[\r\n]/.test(line)) throw new Error(`a bare CR or LF in ${JSON.stringify(line)}`);
    if (Buffer.byteLength(line, 'utf8') > 75) throw new Error(`a line over 75 octets: ${line}`);
  }
  const lines: string[] = [];
  for (const line of raw) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (lines.length === 0) throw new Error('a continuation before any line');
      lines[lines.length - 1] += line.slice(1);
    } else lines.push(line);
  }
  const stack: Component[] = [{ name: '', props: [], children: [] }];
  for (const line of lines) {
    const match = /^([A-Z][A-Z0-9-]*)(;[^:]*)?:(.*)$/.exec(line);
    if (!match) throw new Error(`not a content line: ${line}`);
    const [, name, , value] = match as unknown as [string, string, string | undefined, string];
    const top = stack.at(-1) as Component;
    if (name === 'BEGIN') {
      const child: Component = { name: value, props: [], children: [] };
      top.children.push(child);
      stack.push(child);
    } else if (name === 'END') {
      if (top.name !== value) throw new Error(`END:${value} closes ${top.name}`);
      stack.pop();
    } else top.props.push({ name, value: TEXT_PROPERTIES.has(name) ? unescapeText(value) : value });
  }
  if (stack.length !== 1) throw new Error('a component was not closed');
  const [calendar] = (stack[0] as Component).children;
  if (!calendar || calendar.name !== 'VCALENDAR') throw new Error('no VCALENDAR');
  return calendar;
}

const prop = (c: Component, name: string) => c.props.find((p) => p.name === name)?.value;

t.test('the calendar lists the future events, escaped and folded, with stable UIDs', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const owner = await createUser();
  await insertAccessFixture(db, owner.id); // events in 2025: all past
  const tricky = 'Concert; strings, brass \\ choir\nsecond line — 東京 '.repeat(3);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'future-' || n, case when n = 1 then ${tricky} else 'Later ' || n end,
           '{"venue": "Hall, A; B"}'::jsonb, ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326),
           now() + n * interval '10 days'
    from datasets d cross join generate_series(1, 3) n where d.slug = 'open-data'`);
  const session = as(await login(owner));
  const view = (
    await session('POST', '/api/views', {
      title: 'Open, upcoming',
      state: { catalog: 'open' },
      isPublic: true,
    })
  ).json();

  const first = await app.inject({ method: 'GET', url: `/v/${view.id}/events.ics` });
  t.equal(first.statusCode, 200);
  t.match(first.headers['content-type'], /^text\/calendar; charset=utf-8/);
  const calendar = parseCalendar(first.body);
  t.equal(prop(calendar, 'VERSION'), '2.0');
  t.equal(prop(calendar, 'X-WR-CALNAME'), 'Open, upcoming');
  const events = calendar.children.filter((c) => c.name === 'VEVENT');
  t.equal(events.length, 3, 'the three future events; the past ones are left out');
  for (const event of events)
    for (const name of ['UID', 'DTSTAMP', 'DTSTART']) t.ok(prop(event, name), `${name} present`);
  t.equal(
    prop(events[0] as Component, 'SUMMARY'),
    tricky.trim(),
    'the title round-trips through escaping and folding',
  );
  t.match(prop(events[0] as Component, 'DESCRIPTION'), /venue: Hall, A; B/);
  t.match(prop(events[0] as Component, 'DTSTART'), /^\d{8}T\d{6}Z$/);
  t.ok(
    first.body.split('\r\n').some((line) => line.startsWith(' ')),
    'long lines were folded',
  );

  const again = parseCalendar((await app.inject({ method: 'GET', url: `/v/${view.id}/events.ics` })).body);
  t.same(
    again.children.map((c) => prop(c, 'UID')),
    events.map((c) => prop(c, 'UID')),
    'the same UIDs on every fetch',
  );

  const privateView = (
    await session('POST', '/api/views', { title: 'Mine', state: { catalog: 'mine' } })
  ).json();
  t.equal((await app.inject({ method: 'GET', url: `/v/${privateView.id}/events.ics` })).statusCode, 401);
  const key = (await session('POST', '/api/api-keys', { name: 'calendar', scope: 'read' })).json().secret;
  const keyed = await app.inject({
    method: 'GET',
    url: `/v/${privateView.id}/events.ics`,
    headers: { authorization: `Bearer ${key}` },
  });
  t.equal(keyed.statusCode, 200, 'a read key opens a private calendar');
  t.equal(parseCalendar(keyed.body).children.length, 0, 'no future events in that catalog');
});
