"""What the service's face forwards from :mod:`local2.storage`."""

from local2.storage import (
    People,
    check_name,
    platform_store,
    private_dir,
    token_hash,
    write_private,
    write_private_bytes,
)

__all__ = [
    "People",
    "check_name",
    "platform_store",
    "private_dir",
    "token_hash",
    "write_private",
    "write_private_bytes",
]
