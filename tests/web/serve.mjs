// The page served on 127.0.0.1 for the browser tests, on a free port, its
// address read from the server's first line: tools/web/serve.py (COOP/COEP:
// the threaded page), or for single plain python3 -m http.server (no
// headers: the one-thread page; it prints the port it got). dir: the page's folder.
import {spawn} from 'node:child_process';

export function startServer(single, dir) {
  return new Promise((resolve, reject) => {
    const srv = single
      ? spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '-d', dir],
              {stdio: ['ignore', 'pipe', 'ignore']})
      : spawn('python3', ['tools/web/serve.py', '--port', '0', '--quiet', dir],
              {stdio: ['ignore', 'pipe', 'inherit']});
    let buf = '';
    srv.stdout.on('data', d => {
      buf += d;
      const m = single ? buf.match(/port (\d+)/) : buf.match(/http:\/\/127\.0\.0\.1:\d+\/attnviz\.html/);
      if (m) resolve({srv, url: single ? `http://127.0.0.1:${m[1]}/attnviz.html` : m[0]});
    });
    srv.on('exit', code => reject(new Error(`the server exited (${code}) before serving`)));
  });
}
