// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// An ERC20 for the history benchmark (`benches/history.rs`): cheap bursts of real `Transfer`
/// logs (~2,100 gas each) that involve one chosen wallet, or nobody in particular. Balances are
/// not touched: only the events matter to an indexer.
contract HistoryToken is ERC20 {
    constructor(string memory name_, string memory symbol_) ERC20(name_, symbol_) {}

    /// Emits `n` Transfer events of `wallet`, alternately sent (even `i`) and received (odd
    /// `i`); the counterparty of the `i`-th is `address(uint160(seed + i))`.
    function emitWalletTransfers(address wallet, uint256 seed, uint256 n) external {
        for (uint256 i = 0; i < n; i++) {
            address other = address(uint160(seed + i));
            if (i % 2 == 0) {
                emit Transfer(wallet, other, seed + i);
            } else {
                emit Transfer(other, wallet, seed + i);
            }
        }
    }

    /// Emits `n` Transfer events between fresh addresses: `address(uint160(start + i))` to
    /// `address(uint160(start + i + 1))`.
    function emitTransfers(uint256 start, uint256 n) external {
        for (uint256 i = start; i < start + n; i++) {
            emit Transfer(address(uint160(i)), address(uint160(i + 1)), i);
        }
    }
}
