"""The Rust extension (PyO3). Use the typed API in `sgm_rdp` instead."""

from typing import List, Optional, Tuple

__version__: str

class SgmRdpError(ValueError):
    """Bad input, or an answer the accountant refuses; the message names the parameter."""

def query(line: str) -> str:
    """One `sgm-rdp batch` JSON line in, its JSON answer out."""

def run(args: List[str]) -> str:
    """The command line (without the program name); raises SgmRdpError with its reason."""

def epsilon_phases(
    phases: List[Tuple[float, float, int, str, int, int]], delta: float
) -> Tuple[float, float]: ...
def delta_phases(
    phases: List[Tuple[float, float, int, str, int, int]], epsilon: float
) -> Tuple[float, float]: ...
def rdp_epsilon_phases(
    phases: List[Tuple[float, float, int]], delta: float, orders: Optional[List[float]] = ...
) -> Tuple[float, float]: ...
def rdp_delta_phases(
    phases: List[Tuple[float, float, int]], epsilon: float, orders: Optional[List[float]] = ...
) -> Tuple[float, float]: ...
