//! [`Linked`]: what the `NftToken`s of one page (or of one `nft(...)`) share, loaded in one
//! batch per kind: their contracts' metadata, token rows and preview media, as the selection of
//! `NftToken` needs them.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::{Context, Lookahead};

use super::collection::CONTRACT_FIELDS as COLLECTION_FIELDS;
use super::error::GqlError;
use super::loaders::{selects, ContractKey, Keys, Primed, TokenKey};
use super::media::{self, NftMedia};
use super::nft::TOKEN_FIELDS;
use super::nft_token::NftToken;
use crate::query::{MediaInfo, QueryService};
use crate::types::{self, Chain};

/// What the tokens of one page (or one `nft(...)`) share: their chain, id format, related rows
/// and preview media.
pub struct Linked {
    pub chain: Chain,
    pub format: types::TokenIdFormat,
    pub primed: Arc<Primed>,
    media: HashMap<(types::Address, types::Uint256), MediaInfo>,
    base: Arc<str>,
}

/// `NftToken` fields answered from the contract's metadata.
const CONTRACT_FIELDS: &[&str] = &["name", "symbol", "possibleSpam", "verifiedCollection"];

/// A token of the page: (contract, token id, whether ERC1155).
pub type Moved = (types::Address, types::Uint256, bool);

impl Linked {
    /// Adds to `keys` the rows that `look` (a selection of `NftToken`) needs for `tokens`.
    pub fn want(look: &Lookahead<'_>, tokens: &[Moved], keys: &mut Keys) {
        let collection = look.field("collection");
        if selects(look, CONTRACT_FIELDS)
            || look.field("contractType").exists()
            || selects(&collection, COLLECTION_FIELDS)
        {
            keys.contracts
                .extend(tokens.iter().map(|t| ContractKey(t.0)));
        }
        if selects(look, TOKEN_FIELDS) {
            keys.tokens
                .extend(tokens.iter().map(|t| TokenKey(t.0, t.1)));
        }
    }

    /// The tokens' shared data, with their media in one batch when `look` selects it.
    pub async fn load(
        ctx: &Context<'_>,
        service: &QueryService,
        chain: Chain,
        format: types::TokenIdFormat,
        primed: Arc<Primed>,
        look: &Lookahead<'_>,
        tokens: Vec<Moved>,
    ) -> Result<Arc<Self>, GqlError> {
        let media = if look.field("media").exists() {
            media::page_media(service, &primed, tokens).await?
        } else {
            HashMap::new()
        };
        Ok(Arc::new(Self {
            chain,
            format,
            primed,
            media,
            base: media::base(ctx),
        }))
    }

    /// One token: `contract_type` when the record that links to it knows it.
    pub fn token(
        self: &Arc<Self>,
        contract: types::Address,
        token_id: types::Uint256,
        contract_type: Option<&str>,
    ) -> NftToken {
        NftToken::new(self.clone(), contract, token_id, contract_type)
    }

    /// The preview media of one token, when its page selected and has them.
    pub fn media(&self, contract: types::Address, token_id: types::Uint256) -> Option<NftMedia> {
        let m = self.media.get(&(contract, token_id))?;
        Some(NftMedia::new(m.clone(), &self.base))
    }
}
