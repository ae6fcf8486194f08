"""Units of measure: a small table, so `metre` and `m` are one unit and `m` and `M` are not.

Case rules:

- **symbols are case-sensitive** (`m` is metre, `mm` millimetre, `Mm` megametre, `M` nothing):
  a symbol matches only as written, with the few both-case symbols SI itself allows (`l`/`L`);
- **spelled-out names** (`metre`, `Meters`, `items`) match whatever their case;
- **currency codes** are ISO 4217, upper case (`USD`); the minor unit is `USD_cents`;
- **custom units** go in braces, UCUM style (`{visits}`), and match exactly as written.

Anything else is unknown, and still a unit: a snapshot records it as written (0.1.0 did, and
released contracts declare such units), compares it by its exact text as if it were written in
braces (`seat` is `{seat}`, not `seats` or `Seat`), and `contract lint` warns with what was
probably meant (`unit_advice`). Pure: no I/O.
"""

from __future__ import annotations

import re

from dlt_contract_ops.errors import did_you_mean

# canonical symbol -> spelled-out names (matched case-insensitively) and other symbols
_TABLE: dict[str, tuple[str, ...]] = {
    # dimensionless and counts
    "1": ("ratio", "fraction"),
    "%": ("percent", "pct"),
    "bp": ("basis point", "basis points", "basis_point", "basis_points"),
    "item": ("items", "piece", "pieces", "pcs"),
    # length
    "m": ("meter", "meters", "metre", "metres"),
    "km": ("kilometer", "kilometers", "kilometre", "kilometres"),
    "cm": ("centimeter", "centimeters", "centimetre", "centimetres"),
    "mm": ("millimeter", "millimeters", "millimetre", "millimetres"),
    "um": ("µm", "micrometer", "micrometers", "micrometre", "micrometres"),
    "nm": ("nanometer", "nanometers", "nanometre", "nanometres"),
    "in": ("inch", "inches"),
    "ft": ("foot", "feet"),
    "yd": ("yard", "yards"),
    "mi": ("mile", "miles"),
    "nmi": ("nautical mile", "nautical miles", "nautical_mile", "nautical_miles"),
    # mass
    "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"),
    "mg": ("milligram", "milligrams"),
    "t": ("tonne", "tonnes", "metric ton", "metric_ton"),
    "lb": ("lbs", "pound", "pounds"),
    "oz": ("ounce", "ounces"),
    # time
    "s": ("sec", "second", "seconds"),
    "ms": ("millisecond", "milliseconds"),
    "us": ("µs", "microsecond", "microseconds"),
    "ns": ("nanosecond", "nanoseconds"),
    "min": ("minute", "minutes"),
    "h": ("hr", "hour", "hours"),
    "d": ("day", "days"),
    "wk": ("week", "weeks"),
    # temperature
    "degC": ("°C", "celsius"),
    "degF": ("°F", "fahrenheit"),
    "K": ("kelvin",),
    # information
    "bit": ("bits",),
    "B": ("byte", "bytes"),
    "kB": ("kilobyte", "kilobytes"),
    "MB": ("megabyte", "megabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "TB": ("terabyte", "terabytes"),
    "KiB": ("kibibyte", "kibibytes"),
    "MiB": ("mebibyte", "mebibytes"),
    "GiB": ("gibibyte", "gibibytes"),
    "TiB": ("tebibyte", "tebibytes"),
    # area and volume
    "m2": ("m²", "square meter", "square meters", "square metre", "square metres"),
    "km2": ("km²", "square kilometer", "square kilometers", "square kilometre"),
    "ha": ("hectare", "hectares"),
    "ft2": ("ft²", "square foot", "square feet"),
    "acre": ("acres",),
    "L": ("l", "liter", "liters", "litre", "litres"),
    "mL": ("ml", "milliliter", "milliliters", "millilitre", "millilitres"),
    "m3": ("m³", "cubic meter", "cubic meters", "cubic metre", "cubic metres"),
    "gal": ("gallon", "gallons"),
    # speed
    "m/s": ("meters per second", "metres per second"),
    "km/h": ("kph", "kilometers per hour", "kilometres per hour"),
    "mph": ("miles per hour",),
    "kn": ("knot", "knots"),
    # energy, power, pressure, frequency, angle
    "J": ("joule", "joules"),
    "kJ": ("kilojoule", "kilojoules"),
    "kcal": ("kilocalorie", "kilocalories"),
    "Wh": ("watt hour", "watt hours"),
    "kWh": ("kilowatt hour", "kilowatt hours"),
    "MWh": ("megawatt hour", "megawatt hours"),
    "W": ("watt", "watts"),
    "kW": ("kilowatt", "kilowatts"),
    "MW": ("megawatt", "megawatts"),
    "Pa": ("pascal", "pascals"),
    "kPa": ("kilopascal", "kilopascals"),
    "hPa": ("hectopascal", "hectopascals"),
    "bar": (),
    "psi": (),
    "Hz": ("hertz",),
    "kHz": ("kilohertz",),
    "MHz": ("megahertz",),
    "GHz": ("gigahertz",),
    "deg": ("°", "degree", "degrees"),
    "rad": ("radian", "radians"),
}

# ISO 4217 active codes (and the precious metals and XDR that markets quote in)
_ISO_4217 = """
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP
BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR
KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK
MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR
SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD
TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XAG XAU XCD XCG XDR XOF XPD XPF XPT YER ZAR ZMW
ZWG ZWL
"""
_CURRENCIES = frozenset(_ISO_4217.split())

_SYMBOLS: dict[str, str] = {symbol: symbol for symbol in _TABLE}
_WORDS: dict[str, str] = {}
for _symbol, _aliases in _TABLE.items():
    for _alias in _aliases:
        if _alias.isascii() and _alias.isalpha() and len(_alias) <= 3:
            _SYMBOLS[_alias] = _symbol  # a short alias is a symbol: its case matters
        else:
            _WORDS[_alias.casefold()] = _symbol

_MINOR = re.compile(r"^([A-Z]{3})_cents$")
_CUSTOM = re.compile(r"^\{[^{}]+\}$")


class UnitError(ValueError):
    """A unit the table does not know; the message says what was probably meant."""


def canonical_unit(text: str) -> str:
    """The canonical spelling of unit `text`, or UnitError when it is unknown.

    >>> canonical_unit("metres"), canonical_unit("m"), canonical_unit("USD_cents")
    ('m', 'm', 'USD_cents')
    >>> try:
    ...     canonical_unit("M")
    ... except UnitError as exc:
    ...     print(exc)
    `M` is not a known unit (symbols are case-sensitive). Did you mean `m`?
    """
    unit = text.strip()
    if unit in _SYMBOLS:
        return _SYMBOLS[unit]
    word = _WORDS.get(unit.casefold())
    if word is not None:
        return word
    if unit in _CURRENCIES or _CUSTOM.match(unit):
        return unit
    minor = _MINOR.match(unit)
    if minor and minor.group(1) in _CURRENCIES:
        return unit
    raise UnitError(f"`{text}` is not a known unit{_hint(unit)}")


def unit_identity(text: str) -> str:
    """What a declared unit is compared by: its canonical spelling, or, for a unit the table
    does not know, its exact text as a custom unit (so following lint's `{seat}` advice is no
    change).

    >>> unit_identity("metres"), unit_identity("seat"), unit_identity("{seat}")
    ('m', '{seat}', '{seat}')
    """
    try:
        return canonical_unit(text)
    except UnitError:
        return "{" + text.strip() + "}"


def same_unit(a: str | None, b: str | None) -> bool:
    """Whether two declared units are the same unit (exact text when either is unknown).

    >>> same_unit("meters", "m"), same_unit("m", "M"), same_unit("seat", "seats")
    (True, False, False)
    """
    if a is None or b is None:
        return a is b
    return unit_identity(a) == unit_identity(b)


def unit_advice(text: str) -> str | None:
    """What to write instead of a unit the table does not know; None for a known unit.

    >>> print(unit_advice("M").split(". ")[1])
    Did you mean `m`? Or write `{M}` for a custom unit.
    >>> "write `{seat}`" in unit_advice("seat"), unit_advice("kg")
    (True, None)
    """
    try:
        canonical_unit(text)
    except UnitError:
        unit = text.strip()
        custom = "{" + unit + "}"
        close = _close(unit)
        if close:
            return (
                f"`{unit}` is not in the unit table{close} Or write `{custom}` for a custom unit."
            )
        return (
            f"`{unit}` is not in the unit table (compared by its exact text): write `{custom}` "
            "to declare a custom unit."
        )
    return None


def _hint(unit: str) -> str:
    return _close(unit) or (
        ". Use a symbol or name from the unit table (`m`, `kg`, `s`, `USD`, `USD_cents`, `%`, "
        "`item`, ...) or write a custom unit in braces, e.g. `{visits}`."
    )


def _close(unit: str) -> str:
    """` (symbols are case-sensitive). Did you mean `m`?`, `. Did you mean ...?` or ``."""
    folded = unit.casefold()
    same_letters = sorted(
        {s for s in _SYMBOLS if s.casefold() == folded}
        | {c for c in _CURRENCIES if c.casefold() == folded}
    )
    if same_letters:
        return " (symbols are case-sensitive). Did you mean " + " or ".join(
            f"`{s}`" for s in same_letters
        ) + "?"
    hint = did_you_mean(
        unit, [*_SYMBOLS, *_WORDS], cutoff=0.75,
        show=lambda c: f"`{_SYMBOLS.get(c) or _WORDS[c]}`",
    )
    return "." + hint if hint else ""
