"""schemathesis hooks for tokenql's GraphQL endpoint, loaded by scripts/schemathesis through
SCHEMATHESIS_HOOKS.

schemathesis draws GraphQL queries from the schema the server serves (introspection), so new
fields are fuzzed as soon as they exist. It needs a strategy for every custom scalar; these are
tokenql's, as schema.graphql describes them. Each mostly draws values the server accepts,
addresses that occur in the demo's sample among them (so resolvers reach the database and
return data, not only the boundary's errors), and sometimes values it must refuse with
BAD_USER_INPUT:

- Address: `0x` + 40 hex digits in any letter case; sometimes too short, not hex, or empty.
- Uint256: a decimal or `0x` hex string up to 2^256-1; sometimes 2^256, negative, a float, or
  empty.
- BlockNumber: an Int or a decimal string, around the sample's blocks or anywhere up to 2^53;
  sometimes negative or not a number.

A custom scalar the server serves that is not listed here (a new one) is fuzzed with strings,
with a warning on stderr, so the pass still covers its fields.

schemathesis draws the other arguments as their GraphQL types allow: `chain` as any string,
`first` as any Int, `after` as any string, all of which the server refuses before doing
anything. To let most cases reach the data, most `chain` arguments become a chain name or hex
id (the demo's is `eth`, `0x1`), most `first`/`last` a page size of 1 to 100, and most
`after`/`before` are left out (schemathesis still substitutes cursors it saw in answers).
"""

import json
import os
import sys

import schemathesis
from hypothesis import strategies as st
from schemathesis.graphql import nodes

HERE = os.path.dirname(os.path.abspath(__file__))
U256_MAX = 2**256 - 1
HEX = "0123456789abcdefABCDEF"


def _sample_addresses():
    """Addresses of the demo's sample: its contracts and the wallets in its transfer topics."""
    path = os.path.join(HERE, "..", "data", "demo-mainnet", "logs.jsonl")
    found = set()
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                log = json.loads(line)
                found.add(log["address"].lower())
                topics = log.get("topics") or []
                if topics and topics[0].startswith("0xddf252ad"):
                    for t in topics[1:3]:
                        found.add("0x" + t[-40:].lower())
    except OSError as e:
        sys.stderr.write(f"schemathesis_hooks: no demo addresses ({e}); random ones only\n")
    return sorted(found) or ["0xdac17f958d2ee523a2206206994597c13d831ec7"]


SAMPLE_ADDRESSES = _sample_addresses()


def _any_case(s, rnd):
    return "".join(c.upper() if rnd.random() < 0.5 else c for c in s)


valid_address = st.one_of(
    st.sampled_from(SAMPLE_ADDRESSES),
    st.tuples(st.sampled_from(SAMPLE_ADDRESSES), st.randoms()).map(lambda t: "0x" + _any_case(t[0][2:], t[1])),
    st.text(alphabet=HEX, min_size=40, max_size=40).map("0x".__add__),
)
bad_address = st.one_of(
    st.just(""),
    st.text(alphabet=HEX, min_size=0, max_size=39).map("0x".__add__),
    st.text(alphabet=HEX, min_size=40, max_size=40),
    st.text(max_size=44),
)
address = st.one_of(*[valid_address] * 9, bad_address)

small_or_any_u256 = st.one_of(
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=0, max_value=U256_MAX),
    st.sampled_from([0, 1, 2**53, 2**64, 2**128, U256_MAX]),
)
valid_uint256 = st.one_of(small_or_any_u256.map(str), small_or_any_u256.map(hex))
bad_uint256 = st.one_of(
    st.sampled_from(["", "-1", "1.5", "1e3", "0x", "0xg", " 1", str(U256_MAX + 1), hex(U256_MAX + 1)]),
    st.text(max_size=80),
)
uint256 = st.one_of(valid_uint256, valid_uint256, valid_uint256, bad_uint256)

blocks = st.one_of(
    st.integers(min_value=15_999_990, max_value=19_200_000),
    st.integers(min_value=0, max_value=2**53),
)
block_number = st.one_of(
    blocks.map(nodes.Int),
    blocks.map(str).map(nodes.String),
    blocks.map(nodes.Int),
    st.one_of(
        st.integers(max_value=-1).map(nodes.Int),
        st.sampled_from(["", "-1", "1.5", "0x10", "abc", str(2**64)]).map(nodes.String),
    ),
)

schemathesis.graphql.scalar("Address", address.map(nodes.String))
schemathesis.graphql.scalar("Uint256", uint256.map(nodes.String))
schemathesis.graphql.scalar("BlockNumber", block_number)

BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


def _has_strategy(name):
    """Whether schemathesis can draw the scalar `name`: ours above, or one it knows."""
    from schemathesis.specs.graphql.scalars import CUSTOM_SCALARS, get_extra_scalar_strategies

    return name in BUILT_IN or name in CUSTOM_SCALARS or name in get_extra_scalar_strategies()


@schemathesis.hook
def after_load_schema(context, schema):
    """A custom scalar without a strategy is fuzzed with strings (and said so)."""
    raw = getattr(schema, "raw_schema", None) or {}
    types = (raw.get("__schema") or {}).get("types") or []
    for t in types:
        name = t.get("name") or ""
        if t.get("kind") == "SCALAR" and not name.startswith("__") and not _has_strategy(name):
            sys.stderr.write(
                f"schemathesis_hooks: WARNING: no strategy for the scalar {name}: fuzzing it with "
                "strings; add one to scripts/schemathesis_hooks.py\n"
            )
            schemathesis.graphql.scalar(name, st.text(max_size=80).map(nodes.String))


CHAINS = ["eth", "0x1", "ETH", "0x89", "polygon", "bsc testnet", "0xaa36a7"]
# How often an argument drawn by schemathesis is replaced by one the server accepts.
TUNE = 0.85


def _tuned(body, rnd):
    """`body` with most `chain`, page-size and cursor arguments set to values the server takes."""
    import graphql
    from graphql.language.visitor import REMOVE

    class Tune(graphql.Visitor):
        def enter_argument(self, node, *_):
            name = node.name.value
            if rnd.random() >= TUNE:
                return None
            if name == "chain" and isinstance(node.value, graphql.StringValueNode):
                chain = "eth" if rnd.random() < 0.7 else rnd.choice(CHAINS)
                return graphql.ArgumentNode(name=node.name, value=graphql.StringValueNode(value=chain))
            if name in ("first", "last") and isinstance(node.value, graphql.IntValueNode):
                n = rnd.randint(1, 5) if rnd.random() < 0.5 else rnd.randint(1, 100)
                return graphql.ArgumentNode(name=node.name, value=graphql.IntValueNode(value=str(n)))
            if name in ("after", "before"):
                return REMOVE
            return None

    return graphql.visit(body, Tune())


@schemathesis.hook
def flatmap_body(context, body):
    """Mostly a real chain, a page size of 1 to 100 and no cursor (see the module's comment)."""
    import graphql

    if not isinstance(body, graphql.DocumentNode):
        return st.just(body)
    return st.randoms(use_true_random=False).map(lambda rnd: _tuned(body, rnd))
