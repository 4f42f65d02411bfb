"""IMEP sim-bridge: a ZeroMQ server (PROTOCOL.md v1) hosting real simulators for IMEP."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1

__all__ = ["__version__", "PROTOCOL_VERSION"]
