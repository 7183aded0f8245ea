"""Shared pytest configuration: the ``slow`` marker gates end-to-end otter runs."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs otter end to end (seconds per test)")
