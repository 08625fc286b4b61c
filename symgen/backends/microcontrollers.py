"""Microcontroller cores the generated C is built and run for: the compiler flags of each,
the precision of its floating-point unit, and the qemu board that emulates it.

One table (:data:`CORES`) serves the command line (``symgen generate --target cortex-m4``
prints the build flags and warns when the real type has no hardware support), the emulator
tests (``tests/embedded``), the embedded benchmark (``bench/embedded.py``) and the firmware
example (``examples/embedded/Makefile`` spells the same flags).
"""

from __future__ import annotations

from dataclasses import dataclass

from symgen.backends.real import RealType, real_type
from symgen.errors import SymgenError


@dataclass(frozen=True)
class Core:
    """An Arm Cortex-M core with an FPU.

    - ``name``: as ``-mcpu`` spells it;
    - ``flags``: ``arm-none-eabi-gcc``'s target flags (Thumb, hard-float ABI, the FPU);
    - ``hardware_reals``: the real types its FPU computes (others run in libgcc's software
      floating point);
    - ``qemu_machine``: ``qemu-system-arm -M`` board with this core (Arm MPS2 images);
    - ``software_factor``: executed instructions of a software-double kernel over the float
      one, measured on the emulated core (the Panda's kernels: 41-45x).
    """

    name: str
    flags: tuple[str, ...]
    hardware_reals: tuple[str, ...]
    qemu_machine: str
    software_factor: str = ""

    def software(self, real: str | RealType) -> bool:
        """Whether ``real`` runs in software floating point on this core."""
        return real_type(real).name not in self.hardware_reals

    def note(self, real: str | RealType) -> str | None:
        """One line for a user generating ``real`` kernels for this core, when its FPU does
        not compute that type; else None."""
        if not self.software(real):
            return None
        name = real_type(real).name
        return (f"note: the {self.name}'s FPU computes {' and '.join(self.hardware_reals)} "
                f"only: {name} kernels run in software floating point, "
                f"{self.software_factor} the instructions of --real float")


_THUMB_HARD = ("-mthumb", "-mfloat-abi=hard")

#: The cores, by ``-mcpu`` name.
CORES: dict[str, Core] = {
    "cortex-m4": Core("cortex-m4", ("-mcpu=cortex-m4", *_THUMB_HARD, "-mfpu=fpv4-sp-d16"),
                      ("float",), "mps2-an386", "about 45 times"),
    "cortex-m7": Core("cortex-m7", ("-mcpu=cortex-m7", *_THUMB_HARD, "-mfpu=fpv5-d16"),
                      ("float", "double"), "mps2-an500"),
}


def core(name: str) -> Core:
    """The core ``name`` of :data:`CORES`; an unknown name raises :class:`SymgenError`."""
    try:
        return CORES[name]
    except KeyError:
        raise SymgenError(f"unknown target {name!r} (known: host, "
                          f"{', '.join(CORES)})") from None


__all__ = ["CORES", "Core", "core"]
