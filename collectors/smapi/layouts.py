"""Each SMAPI function's input parameters and output layout, as data.

``verified`` marks layouts checked byte for byte against the z/VM 7.1 recordings in
``tests/data/smapi/``; the others follow IBM's documented layouts as implemented by zthin
(openmainframeproject/feilong) and are provisional until a recording confirms them.
docs/SMAPI.md lists both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class In(Enum):
    """How one input parameter is put on the wire."""

    STR = "int4 length + text"
    INT1 = "1-byte unsigned"
    INT4 = "4-byte signed"
    INT8 = "8-byte signed"
    KV = "keyword=value NUL, omitted when empty"
    CSTR_BLOCK = "int4 length + NUL-terminated strings"
    CSTR_BLOCK_BLANK = "int4 length + blank-separated list + NUL"
    CSTRS = "NUL-terminated strings, no length"


class Out(Enum):
    """How one output field is read."""

    INT1 = "1-byte unsigned"
    INT4 = "4-byte unsigned"
    INT8 = "8-byte unsigned"
    STR = "int4 length + text"
    STR_Z = "int4 length + text, trailing NULs dropped (inner lengths vary)"
    CSTR_LIST = "int4 length + NUL-separated strings"
    CSTR_REST = "NUL-terminated strings up to the end"
    TEXT_REST = "one string up to the end, trailing NULs dropped"
    RAW_REST = "bytes up to the end"
    ARRAY_BYTES = "int4 length in bytes, then elements"
    ARRAY_COUNT = "int4 element count, then elements"


REQUIRED: Any = object()


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: In
    default: Any = REQUIRED


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: Out
    items: tuple[Field, ...] = ()  # element layout of an array
    framed: bool = False  # each array element is preceded by its int4 length


Decoded = dict[str, Any]
Post = Callable[[Decoded, Mapping[str, Any]], Decoded]


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    params: tuple[Param, ...] = ()
    output: tuple[Field, ...] = ()  # when the return code is 0 or 4
    error: tuple[Field, ...] = ()  # otherwise, when data is present
    post: Post | None = None  # turns positional strings into named values
    verified: bool = False
    note: str = ""


def _kv(*names: str) -> tuple[Param, ...]:
    return tuple(Param(n, In.KV, None) for n in names)


def _strs(*names: str) -> tuple[Param, ...]:
    return tuple(Param(n, In.STR, "") for n in names)


# --- post-processing of the functions that answer with positional strings ---------------


def _post_system_info(raw: Decoded, params: Mapping[str, Any]) -> Decoded:
    """System_Info_Query: time zone, date/time, CP level, gen/IPL times, storage line."""
    del params
    fields: list[str] = raw.get("strings", [])
    out: Decoded = {}
    names = ("time_zone", "date_time", "cp_level", "gen_date_time", "ipl_date_time")
    for name, value in zip(names, fields, strict=False):
        out[name] = value
    when = out.get("date_time", "").split()
    if len(when) >= 4:  # "13:59:27 EDT SUNDAY 2019-04-28" -> "2019-04-28 13:59:27 EDT"
        out["date_time"] = f"{when[3]} {when[0]} {when[1]}"
    if len(fields) > 5:
        words = fields[5].split()
        keys = {"CONFIGURED": "configured", "INC": "inc", "STANDBY": "standby"}
        storage: dict[str, str] = {"storage": words[0]} if words else {}
        for i, word in enumerate(words[:-2]):
            key = keys.get(word, "reserved" if word == "RESERVED" else None)
            if key and words[i + 1] == "=":
                storage[key] = words[i + 2]
        out["storage_info"] = storage
    return out


def _post_performance_info(raw: Decoded, params: Mapping[str, Any]) -> Decoded:
    """System_Performance_Info_Query: counts, paging, storage, optional monitor rate, PROCs."""
    del params
    fields: list[str] = raw.get("strings", [])
    out: Decoded = {}
    for name, value in zip(
        ("num_proc", "avg_proc", "page_rate", "total_pages", "total_used"), fields, strict=False
    ):
        out[name] = int(value) if value.strip().isdigit() else None
    rest = fields[5:]
    if rest and not rest[0].startswith("PROC "):
        out["monitor_rate"] = rest[0]
        rest = rest[1:]
    procs = []
    for line in rest:  # "PROC 0000-046% IFL  VM"
        words = line.split()
        if len(words) < 2 or "-" not in words[1]:
            continue
        addr, _, pct = words[1].partition("-")
        usage = pct.rstrip("%")
        procs.append(
            {
                "addr": addr,
                "usage": int(usage) if usage.isdigit() else None,
                "type": words[2] if len(words) > 2 else "",
                "pe": words[3] if len(words) > 3 else "",
            }
        )
    out["procs"] = procs
    return out


def _post_eqid(raw: Decoded, params: Mapping[str, Any]) -> Decoded:
    """System_EQID_Query: "rdev name" (ALL, RDEV) or "name rdev rdev ..." (EQID) lines."""
    if "eqid_array" not in raw:
        return raw
    by_name = str(params.get("eqid_for") or "").upper() == "EQID"
    entries = []
    for line in raw["eqid_array"]:
        words = line.split()
        if by_name and words:
            entries += [{"eqid_name": words[0], "eqid_rdev": r} for r in words[1:]]
        elif len(words) >= 2:
            entries.append({"eqid_rdev": words[0], "eqid_name": words[1]})
    return {**raw, "eqid_array": entries}


_PERF_RECORDS = (
    Field(
        "records",
        Out.ARRAY_COUNT,
        (Field("record", Out.RAW_REST),),
        framed=True,
    ),
)
_CPU_INFO = Field(
    "cpu_info_array",
    Out.ARRAY_BYTES,
    (
        Field("cpu_number", Out.INT4),
        Field("cpu_id", Out.STR),
        Field("cpu_base", Out.INT1),
        Field("cpu_status", Out.INT1),
        Field("cpu_type", Out.INT1),
    ),
    framed=True,
)

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        # --- the functions the smapi source uses ---------------------------------------
        Function(
            "System_Information_Query",
            output=(Field("system_information_data", Out.CSTR_LIST),),
            verified=True,
        ),
        Function(
            "System_Performance_Information_Query",
            params=(Param("system_performance_information_list", In.CSTR_BLOCK),),
            output=(Field("system_performance_information_data", Out.CSTR_LIST),),
            error=(Field("error_data", Out.STR_Z),),
            verified=True,
        ),
        Function(
            "System_Performance_Info_Query",
            params=_kv("monrate"),
            output=(Field("strings", Out.CSTR_REST),),
            post=_post_performance_info,
            verified=True,
            note="legacy; positional strings right after the reason code",
        ),
        Function(
            "System_Processor_Query",
            output=(
                Field("partition_mode", Out.STR),
                Field(
                    "processors",
                    Out.ARRAY_BYTES,
                    (Field("processor_info", Out.STR),),
                ),
            ),
            error=(Field("error_data", Out.STR_Z),),
            note="zthin System_Processor_Query_Layout; no recording",
        ),
        Function(
            "System_Image_Performance_Query",
            output=_PERF_RECORDS,
            note="target is a namelist; zthin layout (count of 112-byte DIAG X'2FC' records)",
        ),
        Function(
            "Image_Performance_Query",
            params=(Param("guests", In.CSTRS),),
            output=_PERF_RECORDS,
            note="undocumented by IBM (zthin vmapiUnDocumented.h); guest names NUL-terminated",
        ),
        Function(
            "Image_CPU_Query",
            output=(Field("number_cpus", Out.INT4), _CPU_INFO),
            verified=True,
        ),
        Function(
            "Image_Active_Configuration_Query",
            output=(
                Field("memory_size", Out.INT4),
                Field("memory_unit", Out.INT1),
                Field("share_type", Out.INT1),
                Field("share_value", Out.STR),
                Field("number_cpus", Out.INT4),
                Field(
                    "cpu_info_array",
                    Out.ARRAY_BYTES,
                    (
                        Field("cpu_number", Out.INT4),
                        Field("cpu_id", Out.STR),
                        Field("cpu_status", Out.INT1),
                    ),
                    framed=True,
                ),
                Field(
                    "device_info_array",
                    Out.ARRAY_BYTES,
                    (Field("device_type", Out.INT1), Field("device_address", Out.STR)),
                    framed=True,
                ),
            ),
            verified=True,
        ),
        Function(
            "Image_Status_Query",
            output=(Field("image_name_array", Out.ARRAY_BYTES, (Field("image_name", Out.STR),)),),
            verified=True,
        ),
        Function(
            "Response_Recovery",
            params=(Param("failed_request_id", In.INT4),),
            output=(Field("response_data", Out.RAW_REST),),
            verified=True,
            note="only the request and the 'nothing saved' answer are recorded",
        ),
        # --- the other recorded functions (codec coverage of every recording) ----------
        Function(
            "System_Info_Query",
            output=(Field("strings", Out.CSTR_REST),),
            post=_post_system_info,
            verified=True,
        ),
        Function(
            "Image_CPU_Query_DM",
            params=(Param("cpu_address", In.STR),),
            output=(
                Field("cpu_address", Out.STR),
                Field("base_cpu", Out.INT1),
                Field("cpuid", Out.STR),
                Field("dedicate_cpu", Out.INT1),
                Field("crypto", Out.INT1),
            ),
            verified=True,
        ),
        Function(
            "Image_Definition_Query_DM",
            params=(
                Param("definition_query_directory_keyword_parameter_list", In.CSTR_BLOCK_BLANK),
            ),
            output=(Field("directory_information_data", Out.CSTR_LIST),),
            error=(Field("error_data", Out.CSTR_LIST),),
            verified=True,
        ),
        Function(
            "Directory_Manager_Task_Cancel_DM",
            params=(Param("operation_id", In.INT4),),
            verified=True,
        ),
        Function(
            "Network_IP_Interface_Modify",
            params=_kv(
                "tcpip_stack",
                "interface_id",
                "permanent",
                "delete_ip",
                "add_ip",
                "change_mask",
                "change_mtu",
                "change_p2p",
            ),
            error=(Field("error_data", Out.STR_Z),),
            verified=True,
        ),
        Function(
            "System_Disk_IO_Query",
            params=(Param("system_disk_io_list", In.STR),),
            output=(Field("dasd_information", Out.CSTR_LIST),),
            error=(Field("error_data", Out.STR_Z),),
            verified=True,
        ),
        Function(
            "System_EQID_Query",
            params=_kv("eqid_for", "eqid_target"),
            output=(Field("eqid_array", Out.CSTR_LIST),),
            error=(Field("error_data", Out.STR_Z),),
            post=_post_eqid,
            verified=True,
        ),
        Function(
            "System_FCP_Free_Query",
            params=_kv("fcp_dev"),
            output=(Field("fcp_array", Out.CSTR_LIST),),
            verified=True,
        ),
        Function(
            "System_SCSI_Disk_Add",
            params=_kv("dev_num", "dev_path_array", "option", "persist"),
            verified=True,
        ),
        Function(
            "VMRELOCATE",
            params=_kv("destination", "action", "force", "immediate", "max_total", "max_quiesce"),
            output=(Field("VMRELOCATE_error_record", Out.TEXT_REST),),
            verified=True,
        ),
        Function(
            "VMRELOCATE_Status",
            params=_kv("status_target"),
            output=(Field("VMRELOCATE_status_array", Out.CSTR_LIST),),
            verified=True,
        ),
        Function(
            "Virtual_Network_Vswitch_Create",
            params=(
                *_strs("switch_name", "real_device_address", "port_name", "controller_name"),
                Param("connection_value", In.INT1, 0),
                Param("queue_memory_limit", In.INT4, 0),
                Param("routing_value", In.INT1, 0),
                Param("transport_type", In.INT1, 0),
                Param("vlan_id", In.INT4, 0),
                Param("port_type", In.INT1, 0),
                Param("update_system_config_indicator", In.INT1, 0),
                *_strs(
                    "system_config_name",
                    "system_config_type",
                    "parm_disk_owner",
                    "parm_disk_number",
                    "parm_disk_password",
                    "alt_system_config_name",
                    "alt_system_config_type",
                    "alt_parm_disk_owner",
                    "alt_parm_disk_number",
                    "alt_parm_disk_password",
                ),
                Param("gvrp_value", In.INT1, 0),
                Param("native_vlanid", In.INT4, 0),
            ),
            verified=True,
        ),
    )
}


def lookup(function: str) -> Function:
    """The layout of ``function``; a function not in the table has no parameters or output."""
    return FUNCTIONS.get(function) or Function(function)
