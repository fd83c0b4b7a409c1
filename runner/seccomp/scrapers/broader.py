# A broader scraper: threads, asyncio, TLS set-up, subprocesses and shells, temp files, zlib,
# sqlite, signals, DNS, time.
import asyncio, concurrent.futures, gzip, hashlib, os, signal, socket, sqlite3, ssl, subprocess
import tempfile, threading, time, urllib.request, zlib, select
from chronomap.scraper import output

def fetch(n):
    try:
        urllib.request.urlopen(f"http://198.51.100.{n}/", timeout=0.5)
    except OSError:
        pass
    return n
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    list(pool.map(fetch, range(70, 74)))
async def main():
    try:
        await asyncio.wait_for(asyncio.open_connection("198.51.100.80", 443), 0.5)
    except (OSError, asyncio.TimeoutError):
        pass
    await asyncio.sleep(0.01)
asyncio.run(main())
ssl.create_default_context()
try:
    socket.getaddrinfo("localhost", 80)
except OSError:
    pass
os.system("echo shell ok > /dev/null")
subprocess.run("ls /scraper | wc -l", shell=True, capture_output=True)
subprocess.run(["python3", "-c", "print(1)"], capture_output=True)
subprocess.check_output(["sh", "-c", "date; uname -a"])
with tempfile.NamedTemporaryFile(dir="/tmp") as f:
    f.write(gzip.compress(b"x" * 10000)); f.flush(); os.fsync(f.fileno())
    os.stat(f.name); os.rename(f.name, f.name + ".2"); os.rename(f.name + ".2", f.name)
with tempfile.TemporaryDirectory() as d:
    db = sqlite3.connect(os.path.join(d, "c.db")); db.execute("create table t(x)"); db.execute("insert into t values (1)"); db.commit(); db.close()
zlib.decompress(zlib.compress(b"abc"))
hashlib.sha256(os.urandom(32)).hexdigest()
signal.signal(signal.SIGALRM, lambda *a: None); signal.setitimer(signal.ITIMER_REAL, 0.01); time.sleep(0.05)
r, w = os.pipe(); os.write(w, b"x"); select.select([r], [], [], 0.1); os.read(r, 1)
threading.Event().wait(0.01)
output.write_row({"ok": True, "pid": os.getpid(), "cpus": os.cpu_count(), "time": time.time()})
output.save()
