//! Unit tests of the query-string parser: every encoding, every default, every bad input.
#![allow(clippy::unwrap_used)]

use super::*;

const WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
const A: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
const B: &str = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

fn msg(r: Result<impl std::fmt::Debug, ApiError>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => {
            assert_eq!(e.status(), axum::http::StatusCode::BAD_REQUEST);
            e.message()
        }
    }
}

#[test]
fn array_suffixes_are_stripped() {
    assert_eq!(base_name("a"), "a");
    assert_eq!(base_name("a[]"), "a");
    assert_eq!(base_name("a[0]"), "a");
    assert_eq!(base_name("a[12]"), "a");
    assert_eq!(base_name("a[x]"), "a[x]");
    assert_eq!(base_name("[]"), "[]");
    assert_eq!(base_name("a]"), "a]");
}

#[test]
fn every_array_encoding_gives_the_same_list() {
    let expected = AddressList::parse(&[A, B]).unwrap();
    for q in [
        format!("contract_addresses={A}&contract_addresses={B}"),
        format!("contract_addresses[]={A}&contract_addresses[]={B}"),
        format!("contract_addresses%5B%5D={A}&contract_addresses%5B%5D={B}"),
        format!("contract_addresses[0]={A}&contract_addresses[1]={B}"),
        format!("contract_addresses%5B1%5D={B}&contract_addresses%5B0%5D={A}"),
        format!("contract_addresses={A},{B}"),
        format!("contract_addresses={A}%2C%20{B}"),
        format!("contract_addresses={B}&contract_addresses[]={A}"),
    ] {
        let p = TransferParams::parse(Some(&q)).unwrap();
        assert_eq!(p.query.contracts, expected, "{q}");
    }
    let one = TransferParams::parse(Some(&format!("wallet_addresses={A}"))).unwrap();
    assert_eq!(one.query.wallets, AddressList::parse(&[A]).unwrap());
}

#[test]
fn nft_defaults() {
    let p = NftParams::parse(WALLET, None).unwrap();
    assert_eq!(p.query.chain, Chain::ETH);
    assert_eq!(p.query.owner.to_string(), WALLET);
    assert_eq!(p.query.page_size.get(), 100);
    assert!(!p.query.with_total);
    assert!(!p.query.exclude_spam);
    assert!(p.query.token_addresses.is_empty());
    assert_eq!(p.format, TokenIdFormat::Decimal);
    assert!(!p.normalize_metadata);
    assert!(!p.media_items);
    assert_eq!(p.cursor, None);
}

#[test]
fn nft_everything_given() {
    let q = format!(
        "chain=0x89&format=hex&limit=5&disable_total=false&exclude_spam=TRUE\
         &token_addresses[]={A}&cursor=abc.def&normalizeMetadata=true&media_items=true&foo=bar"
    );
    let p = NftParams::parse(&WALLET.to_uppercase().replace("0X", "0x"), Some(&q)).unwrap();
    assert_eq!(p.query.chain.name(), "polygon");
    assert_eq!(p.query.owner.to_string(), WALLET);
    assert_eq!(p.format, TokenIdFormat::Hex);
    assert_eq!(p.query.page_size.get(), 5);
    assert!(p.query.with_total);
    assert!(p.query.exclude_spam);
    assert_eq!(p.query.token_addresses.texts(), vec![A.to_string()]);
    assert_eq!(p.cursor.as_deref(), Some("abc.def"));
    assert!(p.normalize_metadata);
    assert!(p.media_items);
}

#[test]
fn empty_values_are_refused_and_unknown_ones_ignored() {
    for q in [
        "chain=",
        "limit=",
        "cursor=",
        "token_addresses=",
        "token_addresses[]=",
        "exclude_spam=+",
        "format=",
        "normalizeMetadata=",
    ] {
        let m = msg(NftParams::parse(WALLET, Some(q)));
        let name = q.split(['=', '[']).next().unwrap_or_default();
        assert!(m.starts_with(&format!("{name}: is empty")), "{q}: {m}");
    }
    for q in [
        "wallet_addresses=0x430d5dde0cd48989737a95b4c46e1801a9a08531,,",
        "from_block=",
    ] {
        assert!(TransferParams::parse(Some(q)).is_err(), "{q}");
    }
    let p = NftParams::parse(WALLET, Some("unknown=&other")).unwrap();
    assert_eq!(p, NftParams::parse(WALLET, None).unwrap());
    let p = TransferParams::parse(Some("chain=bsc+testnet")).unwrap();
    assert_eq!(p.query.chain.id(), 0x61);
}

#[test]
fn v2_2_transfer_routes_read_order_and_dates() {
    let p = TransferParams::parse_wallet(WALLET, None).unwrap();
    assert_eq!(p.query.wallets.texts(), vec![WALLET.to_string()]);
    assert!(p.query.contracts.is_empty());
    assert_eq!(p.query.order, SortOrder::Desc);
    assert_eq!(p.query.dates, DateRange::default());
    let p = TransferParams::parse_token(
        A,
        Some("order=asc&from_date=2023-03-20T08:37:35Z&to_date=1679301500"),
    )
    .unwrap();
    assert!(p.query.wallets.is_empty());
    assert_eq!(p.query.contracts.texts(), vec![A.to_string()]);
    assert_eq!(p.query.order, SortOrder::Asc);
    assert_eq!(p.query.dates.from, Some(1_679_301_455));
    assert_eq!(p.query.dates.to, Some(1_679_301_500));
    // A block bound wins over the date of its side (the date is still checked).
    let p = TransferParams::parse_wallet(
        WALLET,
        Some("from_block=5&from_date=2999-01-01&to_date=2000-01-01"),
    )
    .unwrap();
    assert_eq!(p.query.dates.from, None);
    assert_eq!(p.query.dates.to, Some(946_684_800));
    assert!(TransferParams::parse_wallet(WALLET, Some("from_block=5&from_date=soon")).is_err());
    for (q, want) in [
        ("order=up", "order: 'up' is not an order"),
        (
            "from_date=2023-02-30",
            "from_date: '2023-02-30' is not a date",
        ),
        ("to_date=-5", "to_date: '-5' is not a date"),
        (
            "from_date=2023-03-02&to_date=2023-03-01",
            "from_date: 1677715200 is after to_date",
        ),
        (
            "contract_addresses=0x1",
            "contract_addresses: '0x1' is not an address",
        ),
    ] {
        let m = msg(TransferParams::parse_wallet(WALLET, Some(q)));
        assert!(m.starts_with(want), "{q}: {m}");
    }
    let m = msg(TransferParams::parse_token("usdt", None));
    assert!(m.starts_with("address: 'usdt' is not an address"), "{m}");
}

#[test]
fn transfer_defaults_and_blocks() {
    let p = TransferParams::parse(None).unwrap();
    assert_eq!(p.query.chain, Chain::ETH);
    assert_eq!(p.query.page_size.get(), 100);
    assert_eq!(p.query.blocks, BlockRange::default());
    let p = TransferParams::parse(Some("from_block=10&to_block=10")).unwrap();
    assert_eq!(p.query.blocks.from, Some(BlockNumber(10)));
    assert_eq!(p.query.blocks.to, Some(BlockNumber(10)));
}

#[test]
fn bad_inputs_name_the_parameter_and_the_rule() {
    let cases: &[(&str, &str)] = &[
        ("chain=solana", "chain: unknown chain 'solana'"),
        ("limit=0", "limit: 0 is out of range; expected 1 to 100"),
        ("limit=101", "limit: 101 is out of range; expected 1 to 100"),
        ("limit=ten", "limit: 'ten' is not an integer"),
        (
            "limit=1&limit=2",
            "limit: given 2 times; expected a single value",
        ),
        ("format=octal", "format: 'octal' is not a format"),
        ("exclude_spam=yes", "exclude_spam: 'yes' is not a boolean"),
        ("disable_total=1", "disable_total: '1' is not a boolean"),
        (
            "normalizeMetadata=no",
            "normalizeMetadata: 'no' is not a boolean",
        ),
        ("media_items=on", "media_items: 'on' is not a boolean"),
        (
            "token_addresses=0x12",
            "token_addresses: '0x12' is not an address",
        ),
        ("cursor=a&cursor=b", "cursor: given 2 times"),
    ];
    for (q, want) in cases {
        let m = msg(NftParams::parse(WALLET, Some(q)));
        assert!(m.starts_with(want), "{q}: {m}");
    }
    let m = msg(NftParams::parse("vitalik.eth", None));
    assert!(
        m.starts_with("address: 'vitalik.eth' is not an address"),
        "{m}"
    );
    let long = format!("cursor={}", "a".repeat(5000));
    assert_eq!(
        msg(NftParams::parse(WALLET, Some(&long))),
        "cursor: is malformed or has been tampered with"
    );
}

#[test]
fn bad_transfer_inputs() {
    let many: Vec<String> = (0..101)
        .map(|i| format!("wallet_addresses[]=0x{i:040x}"))
        .collect();
    let cases: Vec<(String, &str)> = vec![
        ("from_block=-1".into(), "from_block: '-1' is negative"),
        (
            "to_block=1.5".into(),
            "to_block: '1.5' is not a block number",
        ),
        (
            "from_block=9&to_block=3".into(),
            "from_block: 9 is greater than to_block 3",
        ),
        (
            many.join("&"),
            "wallet_addresses: 101 entries given; at most 100",
        ),
        (
            "exclude_wallets=0xzz".into(),
            "exclude_wallets: '0xzz' is not an address",
        ),
        (
            "exclude_contracts=1".into(),
            "exclude_contracts: '1' is not an address",
        ),
        (
            "contract_addresses=x,y".into(),
            "contract_addresses: 'x' is not an address",
        ),
        ("limit=-5".into(), "limit: -5 is out of range"),
    ];
    for (q, want) in cases {
        let m = msg(TransferParams::parse(Some(&q)));
        assert!(m.starts_with(want), "{q}: {m}");
    }
}

#[test]
fn a_hundred_addresses_are_fine() {
    let hundred: Vec<String> = (0..100).map(|i| format!("0x{i:040x}")).collect();
    let q = format!("contract_addresses={}", hundred.join(","));
    assert!(TransferParams::parse(Some(&q)).is_ok());
}

#[test]
fn lookups_keep_request_order_and_drop_repeats() {
    let q = format!(
        "addresses[]={B}&addresses[]={A}&addresses[]={}",
        B.to_uppercase().replace("0X", "0x")
    );
    let p = TokenMetadataParams::parse(Some(&q)).unwrap();
    assert_eq!(
        p.addresses,
        vec![Address::parse(B).unwrap(), Address::parse(A).unwrap()]
    );
    let p = TokenSymbolsParams::parse(Some("symbols=USDT,dai&symbols[0]=USDT")).unwrap();
    assert_eq!(p.symbols, vec!["USDT".to_string(), "dai".to_string()]);
    let p = NativeBalanceParams::parse_many(Some(&format!(
        "wallet_addresses={A}&to_block=7&chain=0x89"
    )))
    .unwrap();
    assert_eq!(
        (p.wallets.len(), p.to_block, p.chain.name()),
        (1, Some(BlockNumber(7)), "polygon")
    );
    let p = NativeBalanceParams::parse_one(WALLET, None).unwrap();
    assert_eq!((p.chain, p.to_block), (Chain::ETH, None));
    let p = DateToBlockParams::parse(Some("date=2023-03-20T08:37:35.999Z")).unwrap();
    assert_eq!(p.date, 1_679_301_455);
    assert_eq!(path_chain("0X1").unwrap(), Chain::ETH);
}

#[test]
fn bad_lookups_name_their_parameter() {
    let many: Vec<String> = (0..26).map(|i| format!("0x{i:040x}")).collect();
    let cases: Vec<(Result<(), ApiError>, &str)> = vec![
        (
            DateToBlockParams::parse(None).map(drop),
            "date: is required",
        ),
        (
            DateToBlockParams::parse(Some("date=soon")).map(drop),
            "date: 'soon' is not a date",
        ),
        (
            DateToBlockParams::parse(Some("date=1&date=2")).map(drop),
            "date: given 2 times",
        ),
        (
            TokenMetadataParams::parse(None).map(drop),
            "addresses: is required",
        ),
        (
            TokenMetadataParams::parse(Some("addresses=0x1")).map(drop),
            "addresses: '0x1' is not an address",
        ),
        (
            TokenMetadataParams::parse(Some(&format!("addresses={}", many.join(",")))).map(drop),
            "addresses: 26 entries given; at most 25",
        ),
        (
            TokenSymbolsParams::parse(Some("symbols=a%00")).map(drop),
            "symbols: 'a\0' is not a token symbol",
        ),
        (
            NativeBalanceParams::parse_many(Some("to_block=1")).map(drop),
            "wallet_addresses: is required",
        ),
        (
            NativeBalanceParams::parse_one("0x1", None).map(drop),
            "address: '0x1' is not an address",
        ),
        (
            NativeBalanceParams::parse_one(WALLET, Some("to_block=x")).map(drop),
            "to_block:",
        ),
        (path_chain("nope").map(drop), "chain:"),
    ];
    for (r, want) in cases {
        let m = msg(r);
        assert!(m.starts_with(want), "{want}: {m}");
    }
}

#[test]
fn a_parameter_outside_the_routes_table_is_never_read() {
    // `exclude_spam` is in the wallet-NFT table, not in dateToBlock's: asking for it there is
    // our bug (a 500), whatever the query string holds.
    let p = RawParams::read(spec::DATE_TO_BLOCK, Some("exclude_spam=true"));
    let e = p.boolean("exclude_spam").unwrap_err();
    assert_eq!(e.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    assert!(p.single("cursor").is_err());
    let p = RawParams::read(spec::WALLET_NFTS, Some("exclude_spam=true"));
    assert!(p.boolean("exclude_spam").unwrap());
}

#[test]
fn boolean_defaults_come_from_the_table() {
    let by_table = |table: &'static [ParamSpec], name: &'static str| {
        RawParams::read(table, None).boolean(name).unwrap()
    };
    for table in spec::ALL {
        for p in table.iter() {
            if let Kind::Bool { default } = p.kind {
                assert_eq!(by_table(table, p.name), default, "{}", p.name);
            }
        }
    }
    // And the routes read them: v2.2's spam filter is on by default, `disable_total` too.
    let balances = BalanceParams::parse(WALLET, None).unwrap();
    assert!(balances.query.exclude_spam);
    assert!(!NftParams::parse(WALLET, None).unwrap().query.with_total);
}

#[test]
fn every_route_parses_an_empty_query_string() {
    // A route reading a name outside its table would answer 500 to every request.
    NftParams::parse(WALLET, None).unwrap();
    OwnersParams::parse(A, Some("1"), None).unwrap();
    CollectionNftsParams::parse(A, None, None).unwrap();
    BalanceParams::parse(WALLET, None).unwrap();
    CollectionsParams::parse(WALLET, None).unwrap();
    TransferParams::parse(None).unwrap();
    TransferParams::parse_wallet(WALLET, None).unwrap();
    TransferParams::parse_token(A, None).unwrap();
    NftTransferParams::parse_wallet(WALLET, None).unwrap();
    NftTransferParams::parse_collection(A, None).unwrap();
    NativeBalanceParams::parse_one(WALLET, None).unwrap();
    assert!(msg(DateToBlockParams::parse(None)).contains("is required"));
    assert!(msg(TokenMetadataParams::parse(None)).contains("is required"));
    assert!(msg(TokenSymbolsParams::parse(None)).contains("is required"));
    assert!(msg(NativeBalanceParams::parse_many(None)).contains("is required"));
}
