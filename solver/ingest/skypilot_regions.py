"""Residency tags of the regions SkyPilot's clouds name, and which region a repeated zone belongs to.

Regions come in four spellings: cloud prefixes (aws us-east-1, gcp europe-west4, oci eu-amsterdam-1,
lambda asia-northeast-1), a country code first (cudo no-kristiansand-1, au-melbourne-1), a bare
country code (runpod US, SE), "State, CC, Continent" (vast "Jiangsu, CN, AS") and Azure's run-together
names (eastus2, germanywestcentral). A coarse tag (us, ca, eu, cn, apac, latam, me, af) comes from
each; a country code adds the country's own tag ("eu", "se"), so a job can ask for either.
"""

from __future__ import annotations

import re

REGION_TAGS: tuple[tuple[str, str], ...] = (
    ("cn-", "cn"), ("us-", "us"), ("ca-", "ca"), ("northamerica-", "ca"), ("eu-", "eu"), ("europe-", "eu"),
    ("uk-", "eu"), ("me-", "me"), ("il-", "me"), ("asia-", "apac"), ("ap-", "apac"), ("australia", "apac"),
    ("jp-", "apac"), ("sa-", "latam"), ("southamerica-", "latam"), ("mx-", "latam"), ("af-", "af"),
    ("africa-", "af"))
"""Residency tag of a region, by the start of its name (cloud region prefixes: coarse, continent or
country block). Exact tags per region go in the overlay (clouds.<cloud>.residency)."""

BLOCKS: dict[str, str] = {
    **dict.fromkeys("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE "
                    "IS LI NO GB UK CH".split(), "eu"),
    **dict.fromkeys("AU NZ JP KR SG TW HK IN ID MY TH VN PH".split(), "apac"),
    **dict.fromkeys("BR MX CL AR CO PE".split(), "latam"),
    **dict.fromkeys("AE SA QA IL BH KW OM".split(), "me"),
    **dict.fromkeys("ZA NG KE EG MA".split(), "af"),
    "US": "us", "CA": "ca", "CN": "cn",
}
"""ISO country code → block tag. eu: the EU and EEA, the UK and Switzerland (GDPR or adequacy);
a country in no block (RU, TR, …) gets its own tag only."""

NAME_WORDS: tuple[tuple[str, str], ...] = (
    ("canada", "ca"), ("brazil", "latam"), ("mexico", "latam"), ("chile", "latam"), ("southafrica", "af"),
    ("uae", "me"), ("qatar", "me"), ("israel", "me"), ("europe", "eu"), ("uk", "eu"), ("france", "eu"),
    ("germany", "eu"), ("norway", "eu"), ("sweden", "eu"), ("switzerland", "eu"), ("poland", "eu"),
    ("italy", "eu"), ("spain", "eu"), ("austria", "eu"), ("belgium", "eu"), ("denmark", "eu"), ("finland", "eu"),
    ("ireland", "eu"), ("japan", "apac"), ("korea", "apac"), ("australia", "apac"), ("india", "apac"),
    ("asia", "apac"), ("singapore", "apac"), ("indonesia", "apac"), ("malaysia", "apac"), ("taiwan", "apac"),
    ("newzealand", "apac"), ("china", "cn"))
"""Words of Azure-style region names (no dashes), checked in order; a name ending in us/usN is us."""


def country_tags(code: str) -> tuple[str, ...] | None:
    """Tags of an ISO country code: its block and the country ("eu", "se"), or None when unknown."""
    code = code.upper()
    block = BLOCKS.get(code)
    if block is None:
        return (code.lower(),) if re.fullmatch(r"[A-Z]{2}", code) else None
    return (block,) if block == code.lower() else (block, code.lower())


def residency_tags(region: str) -> tuple[str, ...]:
    """The residency tags a region's name gives (empty when the name is in no table)."""
    for prefix, tag in REGION_TAGS:
        if region.startswith(prefix):
            return (tag,)
    parts = [p.strip() for p in region.split(",")]
    if len(parts) == 3 and re.fullmatch(r"[A-Z]{2}", parts[1]):          # vast: "State, CC, Continent"
        return country_tags(parts[1]) or ()
    if re.fullmatch(r"[A-Z]{2}", region):                                  # runpod: a country code
        return country_tags(region) or ()
    head = re.fullmatch(r"([a-z]{2})-[a-z]+-?\d*", region)                 # cudo: cc-city-N
    if head and head.group(1).upper() in BLOCKS:
        return country_tags(head.group(1)) or ()
    if "-" not in region:
        for word, tag in NAME_WORDS:
            if word in region:
                return (tag,)
        if re.search(r"us\d*$", region):
            return ("us",)
    return ()


def zone_owner(zone: str, regions: list[str]) -> str:
    """The region a zone listed under several regions belongs to: the one its name spells (runpod's
    EU-SE-1 under NO and SE → SE), else the first listed."""
    words = set(re.split(r"[^a-z0-9]+", zone.lower()))
    return next((r for r in regions if r.lower() in words), regions[0])
