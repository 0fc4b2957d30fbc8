"""z/VM Systems Management API: a zthin-style client and the ``smapi`` source.

Modules: ``wire`` (framing), ``layouts`` (each function's parameters and output, as data),
``codec`` (layouts to bytes and back), ``codes`` (return/reason code meanings),
``transport`` (TCP, TLS, AF_IUCV), ``client`` (calls, retries, Response_Recovery),
``keyvalue`` and ``results`` (typed readings), ``credentials`` (the password),
``source`` (the PolledSource). See docs/SMAPI.md.
"""

from esatui.collectors.smapi.client import SmapiClient, SmapiResponse
from esatui.collectors.smapi.errors import (
    SmapiAuthError,
    SmapiCallError,
    SmapiConfigError,
    SmapiConnectionRefused,
    SmapiError,
    SmapiProtocolError,
    SmapiTimeout,
    SmapiTransportError,
    SmapiUnsupportedTransport,
)
from esatui.collectors.smapi.source import CONFIG_KEYS, SmapiSource, build_source

__all__ = [
    "CONFIG_KEYS",
    "SmapiAuthError",
    "SmapiCallError",
    "SmapiClient",
    "SmapiConfigError",
    "SmapiConnectionRefused",
    "SmapiError",
    "SmapiProtocolError",
    "SmapiResponse",
    "SmapiSource",
    "SmapiTimeout",
    "SmapiTransportError",
    "SmapiUnsupportedTransport",
    "build_source",
]
