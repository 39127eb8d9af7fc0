"""What a validation case reports: checked quantities with reference, source and tolerance."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Check:
    """One checked quantity.

    ``criterion``: ``"rel"`` passes when ``|value - reference| / |reference| <= tolerance``;
    ``"<="`` and ``">="`` compare the value with the bound ``tolerance`` (reference is None).
    """

    quantity: str
    value: float
    reference: float | None
    tolerance: float | None
    source: str
    criterion: str = "rel"

    def __post_init__(self) -> None:
        if self.criterion not in ("rel", "<=", ">="):
            raise ValueError(f"check {self.quantity!r}: unknown criterion {self.criterion!r}")
        if self.criterion == "rel" and (self.reference is None or self.tolerance is None):
            raise ValueError(f"check {self.quantity!r}: a relative check needs reference and tolerance")
        self.value = float(self.value)

    @classmethod
    def close(cls, quantity: str, value: float, reference: float, rtol: float, source: str) -> "Check":
        return cls(quantity, value, float(reference), rtol, source, "rel")

    @classmethod
    def at_most(cls, quantity: str, value: float, bound: float, source: str) -> "Check":
        return cls(quantity, value, None, bound, source, "<=")

    @classmethod
    def at_least(cls, quantity: str, value: float, bound: float, source: str) -> "Check":
        return cls(quantity, value, None, bound, source, ">=")

    @property
    def relative_error(self) -> float | None:
        if self.criterion != "rel":
            return None
        return abs(self.value - self.reference) / abs(self.reference)

    @property
    def passed(self) -> bool:
        if self.value != self.value:                        # NaN never passes
            return False
        if self.criterion == "rel":
            return bool(self.relative_error <= self.tolerance)
        if self.criterion == "<=":
            return bool(self.value <= self.tolerance)
        return bool(self.value >= self.tolerance)

    def as_dict(self) -> dict[str, Any]:
        return {"quantity": self.quantity, "value": self.value, "reference": self.reference,
                "tolerance": self.tolerance, "passed": self.passed, "source": self.source,
                "criterion": self.criterion}


@dataclass
class CaseReport:
    """Everything a case returns: checks, problem size, a figure and free-form information."""

    case: str
    checks: list[Check] = field(default_factory=list)
    n_dof: int = 0
    n_steps: int = 0                                        # time or load steps; eigen analyses of modal cases
    figure: Any = None                                      # matplotlib Figure, saved as CASE.png
    info: dict[str, Any] = field(default_factory=dict)      # extra numbers worth keeping

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def as_dict(self, wall_s: float) -> dict[str, Any]:
        return {"case": self.case, "results": [c.as_dict() for c in self.checks],
                "n_dof": int(self.n_dof), "n_steps": int(self.n_steps), "wall_s": float(wall_s),
                "info": self.info}
