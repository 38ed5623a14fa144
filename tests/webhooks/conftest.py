import pytest

from tests.webhooks.receiver import Receiver
from webhooks import outbox


@pytest.fixture(autouse=True)
def fresh_subscriptions():
    """Each test reads the endpoints of its own transaction."""
    outbox.subscriptions.clear()
    yield
    outbox.subscriptions.clear()


@pytest.fixture
def receiver():
    started: list[Receiver] = []

    def start(**script) -> Receiver:
        started.append(Receiver(**script).start())
        return started[-1]

    yield start
    for r in started:
        r.stop()
