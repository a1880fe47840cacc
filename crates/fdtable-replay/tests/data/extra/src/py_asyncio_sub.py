import asyncio
async def main():
    p = await asyncio.create_subprocess_exec("cat", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    out,_ = await p.communicate(b"hello")
    p2 = await asyncio.create_subprocess_shell("echo hi; ls /nonexistent", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    await p2.communicate()
    srv = await asyncio.start_server(lambda r,w: w.close(), "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    rs = [await asyncio.open_connection("127.0.0.1", port) for _ in range(5)]
    for r,w in rs: w.close()
    srv.close(); await srv.wait_closed()
    try: await asyncio.open_connection("127.0.0.1", 1)
    except OSError as e: print(e)
asyncio.run(main())
