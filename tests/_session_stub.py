"""A stand-in for ``st.session_state`` in unit tests that call page helpers without a Streamlit run."""

from __future__ import annotations


class SessionStub(dict):
    """Item and attribute access, like Streamlit's proxy: a missing attribute raises ``AttributeError``."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value) -> None:
        self[name] = value
