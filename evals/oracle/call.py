"""One structured call as a role rule receives it: the prompt, its gold record, the noise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from hybridrag.evals.oracle.gold import GoldRecord, GoldSet
from hybridrag.evals.oracle.noise import Injected, Noise, NoiseLog
from hybridrag.evals.oracle.prompt import PromptView


@dataclass
class Call:
    """A call's prompt view plus what the stand-in holds: gold records, noise setting, log."""

    view: PromptView
    gold: GoldSet
    noise: Noise
    log: NoiseLog
    _record: GoldRecord | None = field(default=None, repr=False)

    @property
    def record(self) -> GoldRecord:
        """The gold record of the question this prompt asks (raises when there is none)."""
        if self._record is None:
            self._record = self.gold.lookup(self.view.text)
        return self._record

    @property
    def looked_up(self) -> GoldRecord | None:
        """The record, if the rule used one (the leak check needs it)."""
        return self._record

    def begin(self, method: str) -> Injected | None:
        """The first decision of a question's run: draw (and log) its error."""
        injected = self.noise.draw(self.record, method)
        self.log.start(self.record, method, injected)
        return injected

    def injected(self, method: str) -> Injected | None:
        """The error drawn for this question (the same as at :meth:`begin`)."""
        return self.noise.draw(self.record, method)

    def carried(self, role: str) -> None:
        """This decision carries the drawn error."""
        self.log.applied(self.record, role)

    def later(self, named: bool) -> None:
        """This is a later decision; ``named``: the feedback in its prompt names the error."""
        self.log.later(self.record, named)


Rule = Callable[[Call], BaseModel]
