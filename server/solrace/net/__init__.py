"""The only code that awaits sockets: the WebSocket connections, the HTTP routes, the app that
wires a process.
"""
