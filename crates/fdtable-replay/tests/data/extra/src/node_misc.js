const fs=require('fs'), cp=require('child_process'), net=require('net');
(async()=>{
  await Promise.all(Array.from({length:30},(_, i)=>fs.promises.readFile('/etc/hostname')));
  const hs = await Promise.all(Array.from({length:10},()=>fs.promises.open('/etc/passwd')));
  await Promise.all(hs.map(h=>h.close()));
  await new Promise(r=>{ const c=cp.spawn('sh',['-c','echo hi; ls /nonexistent'],{stdio:['pipe','pipe','pipe']}); c.stdout.on('data',()=>{}); c.stderr.on('data',()=>{}); c.on('close',r); });
  const srv=net.createServer(s=>s.end('x')); await new Promise(r=>srv.listen(0,'127.0.0.1',r));
  await Promise.all(Array.from({length:5},()=>new Promise(r=>{const c=net.connect(srv.address().port,'127.0.0.1'); c.on('data',()=>{}); c.on('end',r);})));
  srv.close();
  try { fs.openSync('/nonexistent'); } catch(e) {}
  cp.execFileSync('true');
})();
