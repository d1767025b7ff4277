"""The tool-loop baseline harness (LAB-style: list, glob, grep, read, write; one context)."""

from dealroom.harness.toolloop._loop import (
    ToolLoopSettings,
    parse_tool_calls,
    resume_toolloop,
    run_toolloop,
)
from dealroom.harness.toolloop._tools import ToolBox

__all__ = [
    "ToolBox",
    "ToolLoopSettings",
    "parse_tool_calls",
    "resume_toolloop",
    "run_toolloop",
]
