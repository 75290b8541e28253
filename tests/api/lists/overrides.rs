//! A verified allow-list, and an admin's overrides against list imports.

use serde_json::{json, Value};
use tokenql::lists::cli::{run_lists, ListsAction, Setting};

use super::support::*;
use crate::support::common::truth::Truth;
use crate::support::common::{gql_list, Backend};

crate::backend_tests!(verified_list_and_admin_overrides);

async fn verified_list_and_admin_overrides(backend: Backend) {
    let truth = Truth::demo();
    let listed = listed_eth();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;
    // A listed collection and one of its holders; an unlisted one.
    let (owner, spam_nft) = spam_nft_holder(&truth);
    let (fine_owner, fine_nft) = truth
        .nfts
        .iter()
        .find_map(|(o, held)| {
            held.iter()
                .find(|n| !listed.contains(&n.contract))
                .map(|n| (o.clone(), n.contract.clone()))
        })
        .expect("a holder of an unlisted collection");
    import_spam(&app, vec![spam_csv("eth")]).await;

    // The allow-list: chain ids in three spellings, one chain tokenql does not know.
    let allow = TempFile::new(
        "verified",
        "csv",
        &format!("chain_id,address\n1,{fine_nft}\neth,{USDT}\n0x2105,{USDT}\n1,not-an-address\n"),
    );
    let lines = run_lists(
        &app.db,
        ListsAction::Verified {
            file: allow.0.clone(),
            chain: None,
        },
    )
    .await
    .expect("allow-list import");
    assert_eq!(
        lines,
        [format!(
            "verified list {}: 2 imported, 1 skipped (1 for chains tokenql does not know: 0x2105), 1 malformed",
            allow.0.display()
        )]
    );
    assert_eq!(
        nft_flags(&app, &fine_owner, &fine_nft).await,
        (json!(false), json!(true))
    );
    let usdt_flags = |t: Vec<Value>| -> Vec<(Value, Value)> {
        t.iter()
            .map(|r| (r["possible_spam"].clone(), r["verified_collection"].clone()))
            .collect()
    };
    let usdt_filter = format!("contract_addresses[]={USDT}");
    let usdt_args = format!("contractAddresses: {}", gql_list(&[USDT]));
    let t = transfers(&app, &usdt_filter, &usdt_args).await;
    assert!(!t.is_empty());
    assert!(usdt_flags(t)
        .iter()
        .all(|f| *f == (json!(false), json!(true))));

    // An admin clears the listed collection's spam flag: a re-import keeps the choice.
    assert_eq!(nft_flags(&app, &owner, &spam_nft).await.0, json!(true));
    assert_eq!(
        line(&show(&app, &spam_nft).await, "possible_spam"),
        "possible_spam  true (list)"
    );
    set(&app, &spam_nft, Some(Setting::No), None).await;
    assert_eq!(
        line(&show(&app, &spam_nft).await, "possible_spam"),
        "possible_spam  false (admin)"
    );
    let lines = import_spam(&app, vec![spam_csv("eth")]).await;
    assert!(
        lines[0]
            .contains("4377 imported, 4 skipped (3 duplicate rows; 1 kept by an admin override)"),
        "{lines:?}"
    );
    assert_eq!(nft_flags(&app, &owner, &spam_nft).await.0, json!(false));
    let kept = nfts(&app, &owner, true).await;
    assert!(
        kept.iter().any(|r| r["token_address"] == json!(spam_nft)),
        "exclude_spam keeps the admin's choice"
    );
    // The same for verified: an admin's "no" survives the allow-list.
    set(&app, USDT, None, Some(Setting::No)).await;
    run_lists(
        &app.db,
        ListsAction::Verified {
            file: allow.0.clone(),
            chain: None,
        },
    )
    .await
    .expect("allow-list import");
    let t = transfers(&app, &usdt_filter, &usdt_args).await;
    assert!(usdt_flags(t)
        .iter()
        .all(|f| *f == (json!(false), json!(false))));
    // An admin may also flag what no list names.
    set(&app, &fine_nft, Some(Setting::Yes), None).await;
    assert_eq!(
        nft_flags(&app, &fine_owner, &fine_nft).await,
        (json!(true), json!(true))
    );

    // `auto` hands the flags back: cleared now, set again by the next import.
    set(&app, &spam_nft, Some(Setting::Auto), None).await;
    set(&app, USDT, None, Some(Setting::Auto)).await;
    let s = show(&app, &spam_nft).await;
    assert_eq!(line(&s, "possible_spam"), "possible_spam  false (not set)");
    assert_eq!(nft_flags(&app, &owner, &spam_nft).await.0, json!(false));
    import_spam(&app, vec![spam_csv("eth")]).await;
    assert_eq!(nft_flags(&app, &owner, &spam_nft).await.0, json!(true));
    assert_eq!(
        line(&show(&app, &spam_nft).await, "possible_spam"),
        "possible_spam  true (list)"
    );
    run_lists(
        &app.db,
        ListsAction::Verified {
            file: allow.0.clone(),
            chain: None,
        },
    )
    .await
    .expect("allow-list import");
    let t = transfers(&app, &usdt_filter, &usdt_args).await;
    assert!(usdt_flags(t)
        .iter()
        .all(|f| *f == (json!(false), json!(true))));
    app.cleanup().await;
}
