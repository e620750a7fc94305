"""``omniqual agent``: the process beside a server that lets a harness on another host observe
its process tree and arm faults in it, over token-checked HTTP (server, service, token), and the
harness side of it (client, the observer's remote reader)."""
