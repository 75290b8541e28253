// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// An ERC20 for tests: anyone may mint; `spray` emits many real transfers in one transaction.
contract TestToken is ERC20 {
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function burn(address from, uint256 amount) external {
        _burn(from, amount);
    }

    /// Moves `amount` from the caller to each recipient (real balance changes).
    function spray(address[] calldata to, uint256 amount) external {
        for (uint256 i = 0; i < to.length; i++) {
            _transfer(msg.sender, to[i], amount);
        }
    }

    /// Emits `n` Transfer events without touching balances: the cheapest way to make a large
    /// chain of real logs for benchmarks (~2,100 gas per log).
    function emitTransfers(uint256 start, uint256 n) external {
        for (uint256 i = start; i < start + n; i++) {
            emit Transfer(address(uint160(i + 1)), address(uint160(i + 2)), i);
        }
    }
}
