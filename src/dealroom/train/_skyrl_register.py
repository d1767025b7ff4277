"""Registering the SkyRL environment, importable without skyrl-gym.

:mod:`dealroom.train._skyrl` subclasses skyrl-gym's ``BaseTextEnv`` when it is imported, so it
needs the ``skyrl`` extra; this module names it by entry point only, so ``dealroom.train``
(and the CLI above it) imports on a machine without the extra.
"""

from __future__ import annotations

from dealroom.errors import MissingDependency

ENV_ID = "dealroom"
ENTRY_POINT = "dealroom.train._skyrl:DealroomEnv"


def register_skyrl_env(env_id: str = ENV_ID) -> None:
    """Register the dealroom environment (``DealroomEnv``) with skyrl-gym as ``env_id``."""
    try:
        from skyrl_gym.envs.registration import register, registry
    except ImportError:
        raise MissingDependency("skyrl-gym", extra="skyrl", feature="the SkyRL adapter") from None
    if env_id not in registry:
        register(id=env_id, entry_point=ENTRY_POINT)
