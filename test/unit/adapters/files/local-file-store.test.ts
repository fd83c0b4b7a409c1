import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { localFileStore } from '../../../../src/adapters/files/local-file-store.ts';

// A stored upload is on the disk before writeNew resolves (and the upload is answered 201; issue 32
// §4): the file's data, its directory's entry, and the new folder's own entry are fsynced. The
// fsyncs are watched on Node's FileHandle, which every fs/promises open returns.

t.test(
  'a new file is fsynced with its directory (and a new folder with its parent) before it is stored',
  async (t) => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'chronomap-file-store-')));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const probe = await open(root, 'r');
    const prototype = Object.getPrototypeOf(probe) as { sync(this: { fd: number }): Promise<void> };
    await probe.close();
    const original = prototype.sync;
    const synced: string[] = [];
    // Which path each synced descriptor is, read while it is open.
    prototype.sync = async function (this: { fd: number }) {
      synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
      await original.call(this);
    };
    t.teardown(() => {
      prototype.sync = original;
    });

    const store = localFileStore(root);
    const first = await store.writeNew('upload', '.csv', Buffer.from('a,b\n1,2\n'));
    const file = path.join(root, first.storedPath);
    t.equal(readFileSync(file, 'utf8'), 'a,b\n1,2\n');
    t.same(synced, [file, path.dirname(file), root], 'the file, its folder, and the new folder in the root');

    synced.length = 0;
    const second = await store.writeNew('upload', '.csv', Buffer.from('x\n'));
    t.same(
      synced,
      [path.join(root, second.storedPath), path.dirname(file)],
      'an existing folder: file and folder',
    );
  },
);
