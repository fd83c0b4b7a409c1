import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import t from 'tap';
import { localExportFileStore } from '../../../../src/adapters/files/export-file-store.ts';

// The materialised exports' files (adapters/files/export-file-store.ts): findable only once whole,
// 0600, dropped on abort, and kept under the byte cap least recently used out first.

async function keep(store: ReturnType<typeof localExportFileStore>, key: string, text: string) {
  const writer = await store.create(key);
  await writer.write(text);
  return writer.commit();
}

t.test('a file is found only once committed, with its bytes, readable by its owner only', async (t) => {
  const directory = t.testdir();
  const store = localExportFileStore({ directory, maxBytes: 1_000_000 });
  const writer = await store.create('a');
  await writer.write('id,title\r\n');
  t.equal(await store.find('a'), null, 'not findable while written');
  await writer.write('1,One\r\n');
  const file = await writer.commit();
  t.same(await store.find('a'), file);
  t.equal(file.bytes, 17);
  t.equal(readFileSync(file.path, 'utf8'), 'id,title\r\n1,One\r\n');
  t.equal(statSync(file.path).mode & 0o777, 0o600);
  t.equal(await store.find('b'), null, 'another key: nothing');
});

t.test('an aborted writer leaves nothing behind', async (t) => {
  const directory = t.testdir();
  const store = localExportFileStore({ directory, maxBytes: 1_000_000 });
  const writer = await store.create('a');
  await writer.write('partial');
  await writer.abort();
  t.equal(await store.find('a'), null);
  t.same(readdirSync(directory), []);
});

t.test('over the cap, the least recently used files go first; a found file counts as used', async (t) => {
  const directory = t.testdir();
  const store = localExportFileStore({ directory, maxBytes: 250 });
  const hundred = 'x'.repeat(100);
  const a = await keep(store, 'a', hundred);
  const b = await keep(store, 'b', hundred);
  // Written one after the other within a millisecond or so: their order is set explicitly.
  utimesSync(a.path, 1000, 1000);
  utimesSync(b.path, 2000, 2000);
  t.ok(await store.find('a'), 'a is used again (now the most recent)');
  await keep(store, 'c', hundred);
  t.ok(await store.find('a'), 'a stays');
  t.equal(await store.find('b'), null, 'b, the least recently used, went');
  t.ok(await store.find('c'), 'c, just written, stays');
});

t.test('a file larger than the cap is kept until the next one is written', async (t) => {
  const directory = t.testdir();
  const store = localExportFileStore({ directory, maxBytes: 50 });
  await keep(store, 'big', 'y'.repeat(80));
  t.ok(await store.find('big'), 'the request that wrote it can read it');
  await keep(store, 'next', 'z'.repeat(10));
  t.equal(await store.find('big'), null, 'then it goes');
  t.ok(await store.find('next'));
});

t.test('a reserved slot: a library writes the file, the store names it when committed', async (t) => {
  const directory = t.testdir();
  const store = localExportFileStore({ directory, maxBytes: 1_000_000 });
  const slot = await store.reserve('g');
  writeFileSync(slot.path, 'written by a library', { mode: 0o644 });
  t.equal(await store.find('g'), null, 'not findable before the commit');
  const file = await slot.commit();
  t.same(await store.find('g'), file);
  t.equal(file.bytes, 20);
  t.equal(statSync(file.path).mode & 0o777, 0o600, 'made readable by its owner only');
  const dropped = await store.reserve('h');
  writeFileSync(dropped.path, 'half');
  await dropped.abort();
  t.equal(await store.find('h'), null);
  t.same(readdirSync(directory).length, 1, 'only the committed file is left');
});
