//! The parameter tables of the REST routes: what each route reads from its query string, in
//! the order the document lists them. The parser ([`super::super::params`]) reads a query
//! string through its route's table and the OpenAPI document ([`super`]) is written from the
//! same table. A parameter that several routes describe alike is one constant.

use super::{Kind, ParamSpec};

/// A list parameter's description: `$what`, then how lists are written and their limit.
macro_rules! address_list {
    ($what:literal) => {
        concat!(
            $what,
            " Repeat the key for several values (`name=a&name=b`); the bracket \
             (`name[]=a&name[]=b`), indexed (`name[0]=a&name[1]=b`) and comma-separated \
             (`name=a,b`) forms work too, in any mix. Up to 100 addresses."
        )
    };
}

/// A boolean parameter: `true` or `false`, `default` when left out.
const fn flag(name: &'static str, default: bool, description: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: Kind::Bool { default },
        description,
    }
}

/// `chain`, as 14 routes describe it.
const CHAIN: ParamSpec = ParamSpec {
    name: "chain",
    kind: Kind::Chain,
    description: "The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). \
        Default `eth` (`0x1`). Any other value is a 400.",
};

/// `limit`, as 8 routes describe it.
const LIMIT: ParamSpec = ParamSpec {
    name: "limit",
    kind: Kind::Limit,
    description: "The page size: an integer from 1 to 100, default 100. Out of range or not an \
        integer: 400.",
};

/// `cursor`, as 4 routes describe it.
const CURSOR: ParamSpec = ParamSpec {
    name: "cursor",
    kind: Kind::Cursor,
    description: "The `cursor` of the previous answer, to get the next page. It is opaque and \
        bound to the query it came from: a tampered, foreign or malformed cursor is a \
        400.",
};

/// `contract_addresses`, as 2 routes describe it.
const TOKEN_CONTRACTS: ParamSpec = ParamSpec {
    name: "contract_addresses",
    kind: Kind::Addresses,
    description: address_list!("Only transfers of these token contracts."),
};

/// `order`, as 4 routes describe it.
const ORDER: ParamSpec = ParamSpec {
    name: "order",
    kind: Kind::Order,
    description: "`DESC` (newest first, the default) or `ASC` (oldest first); any letter case.",
};

/// `cursor`, as 4 routes describe it.
const ORDERED_CURSOR: ParamSpec = ParamSpec {
    name: "cursor",
    kind: Kind::Cursor,
    description: "The `cursor` of the previous answer, to get the next page. It is opaque and \
        bound to the query it came from (the order included): a tampered, foreign or \
        malformed cursor is a 400.",
};

/// `format`, as 3 routes describe it.
const FORMAT: ParamSpec = ParamSpec {
    name: "format",
    kind: Kind::Format,
    description: "How token ids are written: `decimal` (default) or `hex`.",
};

/// The block and date bounds of a v2.2 list of `$what` (`"transfers"`, `"moves"`), as four
/// constants: `from_block`, `to_block`, `from_date`, `to_date`.
macro_rules! bounds {
    ($what:literal => $from_block:ident, $to_block:ident, $from_date:ident, $to_date:ident) => {
        #[doc = concat!("`from_block` of the lists of ", $what, ".")]
        const $from_block: ParamSpec = ParamSpec {
                name: "from_block",
                kind: Kind::Block,
                description: concat!(
                    "Only ",
                    $what,
                    " in this block or later (inclusive). A non-negative integer; negative, \
                     not an integer, or greater than `to_block`: 400. Wins over `from_date`."
                ),
        };
        #[doc = concat!("`to_block` of the lists of ", $what, ".")]
        const $to_block: ParamSpec = ParamSpec {
                name: "to_block",
                kind: Kind::Block,
                description: concat!(
                    "Only ",
                    $what,
                    " in this block or earlier (inclusive). A non-negative integer; negative \
                     or not an integer: 400. Wins over `to_date`."
                ),
        };
        #[doc = concat!("`from_date` of the lists of ", $what, ".")]
        const $from_date: ParamSpec = ParamSpec {
                name: "from_date",
                kind: Kind::Date,
                description: concat!(
                    "Only ",
                    $what,
                    " in blocks of this time or later (inclusive): Unix seconds, or ISO 8601 \
                     (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no \
                     zone is UTC). Anything else, or later than `to_date`: 400. Ignored when \
                     `from_block` is given."
                ),
        };
        #[doc = concat!("`to_date` of the lists of ", $what, ".")]
        const $to_date: ParamSpec = ParamSpec {
                name: "to_date",
                kind: Kind::Date,
                description: concat!(
                    "Only ",
                    $what,
                    " in blocks of this time or earlier (inclusive), written as `from_date`. \
                     Ignored when `to_block` is given."
                ),
        };
    };
}

bounds!("transfers" =>
    FROM_BLOCK_TRANSFERS, TO_BLOCK_TRANSFERS, FROM_DATE_TRANSFERS, TO_DATE_TRANSFERS);
bounds!("moves" => FROM_BLOCK_MOVES, TO_BLOCK_MOVES, FROM_DATE_MOVES, TO_DATE_MOVES);

/// The query parameters of `GET /{address}/nft`.
pub const WALLET_NFTS: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "format",
        kind: Kind::Format,
        description:
            "How `token_id` is written: `decimal` (default) or `0x`-prefixed `hex`. Anything \
            else is a 400.",
    },
    LIMIT,
    TO_BLOCK_HOLDINGS,
    TO_DATE_HOLDINGS,
    flag(
        "disable_total",
        true,
        "`false` to have the envelope's `total` filled in (the number of matching \
            records); default `true`, which leaves `total` `null` and is faster. Soon to be \
            deprecated upstream.",
    ),
    flag(
        "exclude_spam",
        false,
        "`true` to leave out NFTs of collections marked as possible spam; default \
            `false`.",
    ),
    ParamSpec {
        name: "token_addresses",
        kind: Kind::Addresses,
        description: address_list!(
            "Only NFTs of these contracts. The first request naming a collection that is not \
             fully indexed yet starts its indexing, and answers `SYNCING` until it is done."
        ),
    },
    CURSOR,
    flag(
        "normalizeMetadata",
        false,
        "`true` to have `normalized_metadata` filled in (name, description, image, \
            external_link, animation_url, attributes); default `false`, which leaves it \
            `null`.",
    ),
    flag(
        "media_items",
        false,
        "Whether preview media is asked for; default `false`. When `true`, `media` \
            carries the status of the image's previews and, once made, links to 100, 250 and \
            500 px PNG previews served by tokenql. The first request for an image answers \
            `processing`.",
    ),
];

/// The query parameters of `GET /erc20/transfers`.
pub const ERC20_TRANSFERS: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "from_block",
        kind: Kind::Block,
        description:
            "Only transfers in this block or later (inclusive). A non-negative integer of at \
            most 9223372036854775807; negative, not an integer, or greater than `to_block`: \
            400.",
    },
    ParamSpec {
        name: "to_block",
        kind: Kind::Block,
        description:
            "Only transfers in this block or earlier (inclusive). A non-negative integer of \
            at most 9223372036854775807; negative or not an integer: 400.",
    },
    LIMIT,
    TOKEN_CONTRACTS,
    ParamSpec {
        name: "exclude_contracts",
        kind: Kind::Addresses,
        description: address_list!("Leave out transfers of these token contracts."),
    },
    ParamSpec {
        name: "wallet_addresses",
        kind: Kind::Addresses,
        description: address_list!(
            "Only transfers whose sender or recipient is one of these wallets."
        ),
    },
    ParamSpec {
        name: "exclude_wallets",
        kind: Kind::Addresses,
        description: address_list!(
            "Leave out transfers whose sender or recipient is one of these wallets."
        ),
    },
    CURSOR,
];

/// The query parameters of `GET /{address}/erc20/transfers`.
pub const WALLET_TRANSFERS: &[ParamSpec] = &[
    CHAIN,
    FROM_BLOCK_TRANSFERS,
    TO_BLOCK_TRANSFERS,
    FROM_DATE_TRANSFERS,
    TO_DATE_TRANSFERS,
    TOKEN_CONTRACTS,
    LIMIT,
    ORDER,
    ORDERED_CURSOR,
];

/// The query parameters of `GET /erc20/{address}/transfers`.
pub const TOKEN_TRANSFERS: &[ParamSpec] = &[
    CHAIN,
    FROM_BLOCK_TRANSFERS,
    TO_BLOCK_TRANSFERS,
    FROM_DATE_TRANSFERS,
    TO_DATE_TRANSFERS,
    LIMIT,
    ORDER,
    ORDERED_CURSOR,
];

/// The parameters both NFT transfer lists read, followed by `$extra`.
macro_rules! nft_moves {
    ($($extra:expr),*) => {
        &[
            CHAIN,
            FROM_BLOCK_MOVES,
            TO_BLOCK_MOVES,
            FROM_DATE_MOVES,
            TO_DATE_MOVES,
            FORMAT,
            LIMIT,
            ORDER,
            ORDERED_CURSOR,
            $($extra),*
        ]
    };
}

/// The query parameters of `GET /{address}/nft/transfers`.
pub const WALLET_NFT_TRANSFERS: &[ParamSpec] = nft_moves![ParamSpec {
    name: "contract_addresses",
    kind: Kind::Addresses,
    description: address_list!("Only moves of these collections."),
}];

/// The query parameters of `GET /nft/{address}/transfers` and `GET /nft/transfers` (every
/// collection's moves).
pub const COLLECTION_NFT_TRANSFERS: &[ParamSpec] = nft_moves![];

/// The query parameters of `GET /block/{block_number_or_hash}/nft/transfers`.
pub const BLOCK_NFT_TRANSFERS: &[ParamSpec] = &[CHAIN, FORMAT, LIMIT, ORDER, ORDERED_CURSOR];

/// `to_block` of the holdings questions: the state after that block.
const TO_BLOCK_HOLDINGS: ParamSpec = ParamSpec {
    name: "to_block",
    kind: Kind::Block,
    description: "The holdings after this block (after its last log), amounts and acquisition \
        blocks included; default: now. `SYNCED` only once the history the answer depends on is \
        complete and the indexer has stored the block. A block above the chain's head, \
        negative or not an integer: 400.",
};

/// `to_date` of the holdings questions: the state as of the last block at or before it.
const TO_DATE_HOLDINGS: ParamSpec = ParamSpec {
    name: "to_date",
    kind: Kind::Date,
    description: "The state as of the last block at or before this time: Unix seconds, or ISO \
        8601 (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no zone is \
        UTC); a time after the newest indexed block is now. Anything else: 400. Ignored when \
        `to_block` is given.",
};

/// The query parameters of `GET /nft/{address}/owners` and `GET
/// /nft/{address}/{token_id}/owners`: those of `GET /nft/{address}`.
pub const NFT_OWNERS: &[ParamSpec] = COLLECTION_NFTS;

/// `normalizeMetadata` of the NFT lists.
const NORMALIZE_METADATA: ParamSpec = flag(
    "normalizeMetadata",
    false,
    "`true` fills `normalized_metadata` (name, description, image, … from the metadata).",
);

/// `media_items` of the NFT lists.
const MEDIA_ITEMS: ParamSpec = flag(
    "media_items",
    false,
    "`true` fills `media` (preview status and 100/250/500 px images).",
);

/// The query parameters of `GET /nft/{address}`, `GET /nft/{address}/{token_id}` and `POST
/// /nft/{address}/nfts-by-traits`.
pub const NFT_LISTS: &[ParamSpec] = &[
    CHAIN,
    FORMAT,
    LIMIT,
    CURSOR,
    NORMALIZE_METADATA,
    MEDIA_ITEMS,
];

/// The query parameters of `GET /nft/{address}`: those of [`NFT_LISTS`] and `to_block`.
pub const COLLECTION_NFTS: &[ParamSpec] = &[
    CHAIN,
    FORMAT,
    LIMIT,
    CURSOR,
    TO_BLOCK_HOLDINGS,
    TO_DATE_HOLDINGS,
    NORMALIZE_METADATA,
    MEDIA_ITEMS,
];

/// The query parameters of `GET /{address}/nft/collections`.
pub const WALLET_COLLECTIONS: &[ParamSpec] = &[
    CHAIN,
    LIMIT,
    TO_BLOCK_HOLDINGS,
    TO_DATE_HOLDINGS,
    flag(
        "exclude_spam",
        false,
        "`true` leaves out collections marked possible spam.",
    ),
    flag(
        "token_counts",
        false,
        "`true` adds `count`: how many of each collection's tokens the wallet holds.",
    ),
    CURSOR,
];

/// The query parameters of `GET /{address}/erc20`.
pub const WALLET_BALANCES: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "to_block",
        kind: Kind::Block,
        description:
            "The balances after this block (inclusive), a non-negative integer of at most \
            9223372036854775807; default: now. Negative or not an integer: 400.",
    },
    ParamSpec {
        name: "token_addresses",
        kind: Kind::Addresses,
        description: "Only these tokens. Repeated keys (`token_addresses=a&token_addresses=b`), \
            brackets (`token_addresses[]=a`), indexed (`token_addresses[0]=a`) and \
            comma-separated forms all work. Up to 100 addresses.",
    },
    flag(
        "exclude_spam",
        true,
        "`true` (the default, as in v2.2) leaves out tokens marked possible spam.",
    ),
];

/// The query parameters of `GET /dateToBlock`.
pub const DATE_TO_BLOCK: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "date",
        kind: Kind::Instant {
            example: "2022-08-11T19:12:05.000Z",
        },
        description: "The date: Unix seconds (`1660245125`), Unix milliseconds (`1660245125000`: \
            digits beyond the last second of the year 9999), or ISO 8601 (`2022-08-11`, \
            `2022-08-11T19:12:05Z`, `2022-08-11T21:12:05+02:00`; no zone means UTC). \
            Required; anything else is a 400.",
    },
];

/// The query parameters of `GET /erc20/metadata`.
pub const TOKEN_METADATA: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "addresses",
        kind: Kind::AddressBatch,
        description: "The token contracts, 1 to 25 (repeats count once). Repeated keys \
            (`addresses=a&addresses=b`), brackets (`addresses[]=a`), indexed \
            (`addresses[0]=a`) and comma-separated forms all work.",
    },
];

/// The query parameters of `GET /erc20/metadata/symbols`.
pub const TOKEN_SYMBOLS: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "symbols",
        kind: Kind::TextBatch,
        description:
            "The symbols, 1 to 25, each at most 64 printable characters, compared without \
            regard to letter case. Repeated keys (`symbols=a&symbols=b`), brackets \
            (`symbols[]=a`), indexed (`symbols[0]=a`) and comma-separated forms all work.",
    },
];

/// `to_block` of the native balance routes, which read `$what` at that block.
macro_rules! balance_at {
    ($what:literal) => {
        ParamSpec {
            name: "to_block",
            kind: Kind::Block,
            description: concat!(
                "The block to read the ",
                $what,
                " at, a non-negative integer; default: the chain's head. A block after the \
                 head, negative or not an integer: 400."
            ),
        }
    };
}

/// The query parameters of `GET /{address}/balance`.
pub const NATIVE_BALANCE: &[ParamSpec] = &[CHAIN, balance_at!("balance")];

/// The query parameters of `GET /wallets/balances`.
pub const NATIVE_BALANCES: &[ParamSpec] = &[
    CHAIN,
    balance_at!("balances"),
    ParamSpec {
        name: "wallet_addresses",
        kind: Kind::AddressBatch,
        description: "The wallets, 1 to 25 (repeats count once). Repeated keys \
            (`wallet_addresses=a&wallet_addresses=b`), brackets (`wallet_addresses[]=a`), \
            indexed (`wallet_addresses[0]=a`) and comma-separated forms all work.",
    },
];

/// The query parameters of `GET /nft/{address}/traits` and `GET /nft/{address}/traits/resync`.
pub const TRAITS: &[ParamSpec] = &[CHAIN];

/// The query parameters of `GET /nft/{address}/traits/paginate`.
pub const TRAITS_PAGE: &[ParamSpec] = &[
    CHAIN,
    LIMIT,
    ParamSpec {
        name: "order",
        kind: Kind::Order,
        description: "`DESC` (the default) or `ASC`: the order of the records by trait type, \
            then value; any letter case.",
    },
    ORDERED_CURSOR,
];

/// The query parameters of `GET /nft/{address}/metadata`, `POST /nft/metadata`, `GET
/// /nft/{address}/stats`, `GET /nft/{address}/{token_id}/stats`, `PUT /nft/{address}/sync`,
/// `GET /wallets/{address}/stats` and `POST /nft/getMultipleNFTs` (whose tokens come in the
/// body).
pub const CHAIN_ONLY: &[ParamSpec] = &[CHAIN];

/// The query parameters of `GET /nft/{address}/unique-owners`.
pub const UNIQUE_OWNERS: &[ParamSpec] = &[CHAIN, LIMIT, CURSOR];

/// The query parameters of `GET /nft/{address}/{token_id}/metadata/resync`.
pub const RESYNC_METADATA: &[ParamSpec] = &[
    CHAIN,
    ParamSpec {
        name: "flag",
        kind: Kind::Choice {
            values: &["uri", "metadata"],
            default: "uri",
        },
        description: "What to read again: `uri` (the default) reads the token URI from the \
            chain, then the metadata document it names; `metadata` reads the document from the \
            URI already known. Any other value: 400.",
    },
    ParamSpec {
        name: "mode",
        kind: Kind::Choice {
            values: &["async", "sync"],
            default: "async",
        },
        description: "`async` (the default) queues the fetch and answers 202 at once; `sync` \
            waits up to 15 s for its outcome: 200 when the metadata was fetched, 404 when it \
            could not be, 202 when it is still under way. Any other value: 400.",
    },
];

/// The query parameters of `GET /wallets/{address}/chains`.
pub const WALLET_CHAINS: &[ParamSpec] = &[ParamSpec {
    name: "chains",
    kind: Kind::Chains,
    description: "The chains to look at, by name or `0x` hex id; default: every chain this \
        server indexes. Repeated keys (`chains=eth&chains=0x89`), brackets (`chains[]=eth`), \
        indexed (`chains[0]=eth`) and comma-separated forms all work. An unknown chain: 400.",
}];

/// The query parameters of `GET /erc20/{token_address}/owners`.
pub const TOKEN_OWNERS: &[ParamSpec] = &[
    CHAIN,
    LIMIT,
    ParamSpec {
        name: "to_block",
        kind: Kind::Block,
        description: "The holders and balances after this block (after its last log); default: \
            now. `SYNCED` only once the token's history is complete and the indexer has stored \
            the block. A block above the chain's head, negative or not an integer: 400.",
    },
    TO_DATE_HOLDINGS,
    ParamSpec {
        name: "order",
        kind: Kind::Order,
        description: "`DESC` (largest balance first, the default) or `ASC` (smallest first), \
            in any letter case; holders with equal balances follow their address in the same \
            direction.",
    },
    ORDERED_CURSOR,
];

/// The query parameters of `GET /erc20/{address}/stats`.
pub const TOKEN_STATS: &[ParamSpec] = &[CHAIN];

/// `GET /streams/evm` and `GET /streams/evm/{id}/address`: Moralis Streams' pages.
pub const STREAMS_PAGE: &[ParamSpec] = &[
    LIMIT,
    ParamSpec {
        name: "cursor",
        kind: Kind::Cursor,
        description: "The `cursor` of the previous answer, to get the next page (the last \
            stream id, or the last address, of that page). A malformed cursor is a 400.",
    },
];
