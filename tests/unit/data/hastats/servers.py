import socket, threading, sys, time
def serve(port, answer=None, delay=0):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c, answer, delay), daemon=True).start()
def one(c, answer, delay):
    try:
        if delay: time.sleep(delay)
        if answer:
            if answer.startswith(b"HTTP"): c.recv(4096)
            c.sendall(answer)
    except Exception: pass
    c.close()
ports = [int(p) for p in sys.argv[1].split(",")]
for p in ports: threading.Thread(target=serve, args=(p,), daemon=True).start()
threading.Thread(target=serve, args=(19948, b"up 75%\n"), daemon=True).start()
threading.Thread(target=serve, args=(19951, b"drain #going away\n"), daemon=True).start()
threading.Thread(target=serve, args=(19955, b"up 50%\n", 0.8), daemon=True).start()
threading.Thread(target=serve, args=(19956, b"down #dead, really\n"), daemon=True).start()
threading.Thread(target=serve, args=(19957, b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"), daemon=True).start()
threading.Event().wait()
