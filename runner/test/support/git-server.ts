// A local HTTPS git host for the clone tests: git's smart HTTP protocol through
// `git http-backend` (CGI) behind Node's https server, with a self-signed certificate that the
// runner's git trusts through GIT_SSL_CAINFO. `/redirect/...` answers a redirect to another
// host, to check that the runner's clone refuses to follow it; `/trickle/...` answers git's
// first request with a byte every 200 ms and never finishes, to check the clone timeout.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GitServer {
  url: string;
  caFile: string;
  /** Requests under /trickle/: how many came, and how many are still being answered. */
  trickles(): { served: number; open: number };
  /** Makes a bare repository `name.git` from a file map, optionally with a second branch. */
  addRepo(
    name: string,
    files: Record<string, string | Buffer>,
    branches?: Record<string, Record<string, string>>,
  ): void;
  /** The commit a branch of a repository points at (hex). */
  head(name: string, branch: string): string;
  close(): Promise<void>;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    stdio: 'pipe',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });

function writeTree(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    execFileSync('mkdir', ['-p', join(dir, name, '..')]);
    writeFileSync(join(dir, name), content);
  }
}

export async function startGitServer(): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'chronomap-git-'));
  const keyFile = join(root, 'key.pem');
  const caFile = join(root, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      caFile,
    ],
    { stdio: 'pipe' },
  );
  const repos = join(root, 'repos');
  execFileSync('mkdir', ['-p', repos]);

  const trickles = new Set<NodeJS.Timeout>();
  let trickled = 0;
  const server: Server = createServer(
    { key: readFileSync(keyFile), cert: readFileSync(caFile) },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://localhost');
      if (url.pathname.startsWith('/trickle/')) {
        // The start of a valid smart-HTTP answer whose first pkt-line announces 65520 bytes.
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
        res.write('fff0# service=git-upload-pack');
        const timer = setInterval(() => res.write(' '), 200);
        trickles.add(timer);
        trickled += 1;
        res.on('close', () => {
          clearInterval(timer);
          trickles.delete(timer);
        });
        return;
      }
      if (url.pathname.startsWith('/redirect/')) {
        res
          .writeHead(302, {
            location: `https://127.0.0.2:${port}${url.pathname.slice('/redirect'.length)}${url.search}`,
          })
          .end();
        return;
      }
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: repos,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          REQUEST_METHOD: req.method ?? 'GET',
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
          GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
          REMOTE_ADDR: '127.0.0.1',
        },
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let headersSent = false;
      cgi.stdout.on('data', (chunk: Buffer) => {
        if (headersSent) return void res.write(chunk);
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        let status = 200;
        for (const line of head.subarray(0, end).toString().split('\r\n')) {
          const [name, ...rest] = line.split(':');
          const value = rest.join(':').trim();
          if (name?.toLowerCase() === 'status') status = Number.parseInt(value, 10);
          else if (name) res.setHeader(name, value);
        }
        res.writeHead(status);
        headersSent = true;
        res.write(head.subarray(end + 4));
      });
      cgi.on('close', () => res.end());
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    url: `https://localhost:${port}`,
    caFile,
    trickles: () => ({ served: trickled, open: trickles.size }),
    addRepo(name, files, branches = {}) {
      const work = join(root, `work-${name}`);
      execFileSync('mkdir', ['-p', work]);
      git(work, 'init', '-q', '-b', 'main');
      writeTree(work, files);
      git(work, 'add', '-A');
      git(work, 'commit', '-qm', 'initial');
      for (const [branch, branchFiles] of Object.entries(branches)) {
        git(work, 'checkout', '-q', '-b', branch);
        writeTree(work, branchFiles);
        git(work, 'add', '-A');
        git(work, 'commit', '-qm', branch);
        git(work, 'checkout', '-q', 'main');
      }
      git(root, 'clone', '-q', '--bare', work, join(repos, `${name}.git`));
      // Partial clones (the main app reads only scrapers.yml with --filter=blob:none) need this.
      git(join(repos, `${name}.git`), 'config', 'uploadpack.allowFilter', 'true');
    },
    head(name, branch) {
      return git(join(repos, `${name}.git`), 'rev-parse', branch)
        .toString()
        .trim();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
