#!/usr/bin/python3
"""net_hostile.py CB PORT NCONN SIZE ITERS DURATION BIDIR [SECRET]

A `collbench net` client that knows the secret (COLL_SECRET, or SECRET) and
asks for whatever it is told (tests/mp/42-collbench-net-huge.sh). Starts the
server `CB net -p PORT` itself so that it can read the server's peak RSS
(getrusage of its children) once it exits. Prints the server's stderr lines
prefixed "server: ", then "answer refused|accepted|stranger" and
"server_maxrss_kib N"; exits 0 when the exchange itself went as the protocol
says (a refusal is a normal outcome), 1 otherwise.
Protocol (tools/collbench/net.c, net_auth.c, src/core/auth.c): 10 big-endian
words {magic, version, session, lat, bidir, nconn, all, size, iters,
duration bits}, then the connector's nonce Nc (32 bytes); the server answers
Na | HMAC(key, "collbench-auth-1" 'A' bind Nc Na); we send
HMAC(key, ... 'C' ...); the server answers {magic, refused}.
"""
import hashlib, hmac, os, resource, socket, struct, subprocess, sys, time

cb, port = sys.argv[1], int(sys.argv[2])
nconn, size, iters, dur, bidir = (int(x) for x in sys.argv[3:8])
secret = sys.argv[8] if len(sys.argv) > 8 else os.environ["COLL_SECRET"]
MAGIC, VERSION, NET_ROLE = 0x43424E4554303031, 2, 4

srv = subprocess.Popen([cb, "net", "-p", str(port), "--timeout", "20"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
deadline = time.time() + 10
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.05)

def recv(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("server closed")
        b += c
    return b

session = int.from_bytes(os.urandom(8), "little")
words = [MAGIC, VERSION, session, 0, bidir, nconn, 0, size, iters, struct.unpack("<Q", struct.pack("<d", float(dur)))[0]]
s.sendall(b"".join(w.to_bytes(8, "big") for w in words))
key = hashlib.sha256(secret.encode()).digest()
bind = struct.pack("<IIIIIII", NET_ROLE, session & 0xFFFFFFFF, session >> 32, 0, 0, 0, nconn & 0xFFFFFFFF)
nc = os.urandom(32)
s.sendall(nc)
answer, ok = "?", False
try:
    ch = recv(64)
    na, mac_a = ch[:32], ch[32:]
    mac = lambda side: hmac.new(key, b"collbench-auth-1" + side + bind + nc + na, hashlib.sha256).digest()
    if not hmac.compare_digest(mac(b"A"), mac_a):
        # the server does not know our (wrong) secret: prove ours all the same, be refused
        s.sendall(mac(b"C"))
        try:
            got = s.recv(16)
        except OSError:
            got = b""
        answer, ok = "stranger", len(sys.argv) > 8 and not got
    else:
        s.sendall(mac(b"C"))
        ack = recv(16)
        m, refused = int.from_bytes(ack[:8], "big"), int.from_bytes(ack[8:], "big")
        answer, ok = ("refused" if refused else "accepted"), m == MAGIC
except (EOFError, OSError) as e:
    answer = "closed: %s" % e
s.close()
err = srv.communicate(timeout=30)[1]
for line in err.splitlines():
    print("server:", line)
print("answer", answer)
print("server_exit", srv.returncode)
print("server_maxrss_kib", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(0 if ok else 1)
