"""CP commands through /dev/vmcp: the client, the response parsers and the ``vmcp`` source."""

from esatui.collectors.vmcp.client import (
    CpResponse,
    VmcpClient,
    VmcpError,
    VmcpPermissionError,
    VmcpUnavailable,
)
from esatui.collectors.vmcp.device import LinuxVmcpSession, VmcpSession
from esatui.collectors.vmcp.source import VCPU, ZVM_CRYPTO, VmcpSource

__all__ = [
    "VCPU",
    "ZVM_CRYPTO",
    "CpResponse",
    "LinuxVmcpSession",
    "VmcpClient",
    "VmcpError",
    "VmcpPermissionError",
    "VmcpSession",
    "VmcpSource",
    "VmcpUnavailable",
]
