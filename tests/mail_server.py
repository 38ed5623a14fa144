"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, for the tests of the
e-mails: Django's SMTP backend talks to it as to any mail server."""

from __future__ import annotations

import email
import email.policy
import socket
from dataclasses import dataclass, field
from email.message import EmailMessage

from aiosmtpd.controller import Controller


@dataclass
class Received:
    """The messages the server accepted, parsed, in the order they arrived."""

    messages: list[EmailMessage] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if address in m["X-Envelope-To"]]

    @staticmethod
    def body(message: EmailMessage) -> str:
        return message.get_body(preferencelist=("plain",)).get_content()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start() -> tuple[Controller, Received]:
    received = Received()
    controller = Controller(received, hostname="127.0.0.1", port=free_port())
    controller.start()
    return controller, received
