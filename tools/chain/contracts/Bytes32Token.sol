// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A token shaped like old mainnet tokens (e.g. MKR): `name` and `symbol` return bytes32, and
/// there is no `decimals`. For testing tolerant metadata reads.
contract Bytes32Token {
    bytes32 public name = "Maker";
    bytes32 public symbol = "MKR";

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        emit Transfer(address(0), to, amount);
    }
}
