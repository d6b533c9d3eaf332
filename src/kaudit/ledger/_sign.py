"""ed25519 signatures over ledger anchors (the optional `sign` extra: `cryptography`).

Keys are PEM files: PKCS#8 private keys and SubjectPublicKeyInfo public keys, the forms
`kaudit ledger keygen` writes and `openssl genpkey -algorithm ed25519` produces.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kaudit._atomic import write_atomic
from kaudit.errors import KauditError, LedgerError
from kaudit.ledger._anchor import Anchor


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise LedgerError(
            "signing needs the 'cryptography' package: pip install 'kaudit[sign]'"
        ) from None
    return serialization, ed25519


def _read_pem(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LedgerError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None


def generate_keypair(private_path: Path, public_path: Path) -> None:
    """Write a new ed25519 private key (mode 0600) and its public key as PEM files.

    Refuses to overwrite an existing file: losing a signing key orphans every anchor.
    """
    serialization, ed25519 = _crypto()
    for path in (private_path, public_path):
        if path.exists():
            raise LedgerError(f"{path}: already exists; keys are never overwritten")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # Public key first: a failure on it leaves no private key behind to block a retry,
    # and a failure on the private key removes the public key it would have matched.
    try:
        write_atomic(public_path, public_pem, exclusive=True)
        try:
            write_atomic(private_path, private_pem, mode=0o600, exclusive=True)
        except BaseException:
            public_path.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise LedgerError(f"cannot write the key pair ({exc.strerror or exc})") from None
    except KauditError as exc:
        raise LedgerError(str(exc)) from None


def sign_anchor(anchor: Anchor, private_key: Path) -> Anchor:
    """The anchor with a hex ed25519 signature over its count and head."""
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(_read_pem(private_key, "key"), password=None)
    except (ValueError, TypeError) as exc:
        raise LedgerError(f"{private_key}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise LedgerError(f"{private_key}: not an ed25519 private key")
    return replace(anchor, signature=key.sign(anchor.message()).hex())


def load_public_key(public_key: Path) -> Any:
    """The ed25519 public key in the PEM file `public_key`; LedgerError when it holds none."""
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(_read_pem(public_key, "public key"))
    except (ValueError, TypeError) as exc:
        raise LedgerError(f"{public_key}: not a PEM public key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise LedgerError(f"{public_key}: not an ed25519 public key")
    return key


def check_signature(anchor: Anchor, public_key: Path) -> None:
    """Raise LedgerError unless the anchor carries a valid signature by `public_key`."""
    from cryptography.exceptions import InvalidSignature

    key = load_public_key(public_key)
    if anchor.signature is None:
        raise LedgerError("the anchor in `head` has no signature to check against `pubkey`")
    try:
        key.verify(bytes.fromhex(anchor.signature), anchor.message())
    except (InvalidSignature, ValueError):
        raise LedgerError(
            f"signature does not match the anchor (records {anchor.records}, head "
            f"{anchor.head[:16]}…): the anchor was forged or altered"
        ) from None
