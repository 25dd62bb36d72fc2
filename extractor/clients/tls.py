"""One TLS context per trust store, shared by the HTTP clients this package builds.

Building a TLS context loads the whole CA bundle (about 55 ms of CPU with the system bundle), and
the SDK's HTTP library builds one for every client it is not handed one for: an ``OpenAIClient``
session per event loop, the doctor's probe, and each of the doctor's mode trials. The context
built here is the one ``httpx2`` builds by default (the trust store of ``SSL_CERT_FILE`` /
``SSL_CERT_DIR`` when set, else certifi's), built once for each setting of those two variables
and reused. Every client given it speaks HTTP/1.1 only (the SDK's default), so the ALPN protocols
the transport sets on it per connection are the same for all of them. A caller's own
``http_client`` is used as it is and never gets this context.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx2

__all__ = ["tls_context"]


def tls_context() -> ssl.SSLContext:
    """The default TLS context for the current trust-store settings, built once per setting."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # The arguments are the cache key: create_ssl_context reads the same variables itself.
    del cert_file, cert_dir
    return httpx2.create_ssl_context()
