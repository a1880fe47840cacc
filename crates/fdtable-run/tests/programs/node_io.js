// node: fs promises and callbacks, child processes with pipes, a loopback server, execFileSync.
const fs = require('fs'), cp = require('child_process'), net = require('net');
(async () => {
  const all = await Promise.all(Array.from({length: 20}, () => fs.promises.readFile('/etc/passwd')));
  console.log('read', all.length, all.every(b => b.length === all[0].length));
  const hs = await Promise.all(Array.from({length: 10}, () => fs.promises.open('/etc/passwd')));
  await Promise.all(hs.map(h => h.close()));
  console.log('opened and closed', hs.length);
  const out = await new Promise(r => { let s = ''; const c = cp.spawn('sh', ['-c', 'echo hi; ls /nonexistent'], {stdio: ['pipe', 'pipe', 'pipe']}); c.stdout.on('data', d => s += d); c.stderr.on('data', () => {}); c.on('close', code => r(s.trim() + ' ' + code)); });
  console.log('spawn', out);
  const srv = net.createServer(s => s.end('x')); await new Promise(r => srv.listen(0, '127.0.0.1', r));
  const got = await Promise.all(Array.from({length: 5}, () => new Promise(r => { let d = ''; const c = net.connect(srv.address().port, '127.0.0.1'); c.on('data', x => d += x); c.on('end', () => r(d)); })));
  console.log('net', got.join(''));
  srv.close();
  try { fs.openSync('/nonexistent'); } catch (e) { console.log('open', e.code); }
  console.log('execFileSync', cp.execFileSync('echo', ['sync']).toString().trim());
  fs.writeFileSync('w.txt', 'abc'); console.log('written', fs.readFileSync('w.txt', 'utf8'));
})();
