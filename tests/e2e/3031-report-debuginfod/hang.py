# hang.py PORTFILE: a server on 127.0.0.1 (a free port, written to
# PORTFILE) that accepts connections and never answers them
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
