// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// An ERC721 for tests: anyone may mint any id, owners may burn.
contract TestNFT is ERC721 {
    string private _base;

    constructor(string memory name_, string memory symbol_, string memory base_) ERC721(name_, symbol_) {
        _base = base_;
    }

    function _baseURI() internal view override returns (string memory) {
        return _base;
    }

    function mint(address to, uint256 id) external {
        _mint(to, id);
    }

    function mintMany(address to, uint256 start, uint256 n) external {
        for (uint256 i = start; i < start + n; i++) {
            _mint(to, i);
        }
    }

    function burn(uint256 id) external {
        _checkAuthorized(ownerOf(id), msg.sender, id);
        _burn(id);
    }
}
