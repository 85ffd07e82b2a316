# hang.py PORTFILE: a server on 127.0.0.1 (a free port, written to
# PORTFILE once it listens) that accepts connections and never answers
# them; each connection it takes adds a line to PORTFILE.conns
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[1] + ".conns", "a") as f:
        f.write("connection\n")
