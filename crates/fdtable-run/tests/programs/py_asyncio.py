# asyncio: epoll, loopback TCP and Unix servers, socketpair, subprocesses, the signal wakeup fd.
import asyncio, os, signal, socket, tempfile
async def echo(r, w):
    w.write(await r.readline()); await w.drain(); w.close()
async def main():
    srv = await asyncio.start_server(echo, "127.0.0.1", 0)
    host, port = srv.sockets[0].getsockname()[:2]
    for i in range(3):
        rd, wr = await asyncio.open_connection(host, port)
        wr.write(b"tcp %d\n" % i); await wr.drain(); print((await rd.readline()).decode().strip()); wr.close()
    srv.close(); await srv.wait_closed()
    path = os.path.join(tempfile.mkdtemp(), "s")
    usrv = await asyncio.start_unix_server(echo, path)
    rd, wr = await asyncio.open_unix_connection(path)
    wr.write(b"unix\n"); await wr.drain(); print((await rd.readline()).decode().strip()); wr.close()
    usrv.close()
    proc = await asyncio.create_subprocess_exec("sh", "-c", "echo from child; exit 4", stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate(); print(out.decode().strip(), proc.returncode)
    a, b = socket.socketpair()
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(a, b"pair"); print((await loop.sock_recv(b, 10)).decode())
    fut = loop.create_future()
    loop.add_signal_handler(signal.SIGUSR1, lambda: fut.set_result("signal"))
    os.kill(os.getpid(), signal.SIGUSR1); print(await fut)
asyncio.run(main())
