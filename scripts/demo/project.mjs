// The demo's project: a small Python shop library with a real bug in its discount
// arithmetic and a real unittest suite that fails because of it. The catalog is
// long enough that a search over the sources prints a large real output, and the
// catalog tests make a verbose test run print a log of several kilobytes.
import * as fs from "node:fs";
import * as path from "node:path";

const CATALOG_SIZE = 200;
const KINDS = ["Hex bolt", "Wing nut", "Wood screw", "Washer", "Hinge", "Bracket", "Anchor", "Rivet"];
const SIZES = ["M3", "M4", "M5", "M6", "M8", "M10"];
const DISCOUNTS = [0, 5, 10, 15, 20, 25, 50];

/** The catalog's products: [sku, name, price in cents, discount percent]. */
export function catalog() {
	const products = [];
	for (let i = 1; i <= CATALOG_SIZE; i++) {
		const sku = `SKU-${String(i).padStart(4, "0")}`;
		const name = `${KINDS[i % KINDS.length]} ${SIZES[(i * 7) % SIZES.length]}`;
		const price = 150 + ((i * 137) % 4850);
		products.push([sku, name, price, DISCOUNTS[(i * 3) % DISCOUNTS.length]]);
	}
	return products;
}

/** The line that holds the bug, and the line that fixes it. */
export const BUGGY_LINE = "    return round(price_cents * discount_percent / 100)";
export const FIXED_LINE = "    return round(price_cents * (100 - discount_percent) / 100)";

const PRICING = `"""Prices after discounts, in whole cents."""


def apply_discount(price_cents, discount_percent):
    """The price after taking discount_percent percent off, rounded to the cent."""
    if not 0 <= discount_percent <= 100:
        raise ValueError(f"discount_percent must be between 0 and 100, got {discount_percent}")
${BUGGY_LINE}
`;

const CART = `"""A shopping cart over the catalog."""

from shop.catalog import find
from shop.pricing import apply_discount


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, sku, quantity=1):
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        self.lines.append((find(sku), quantity))

    def total_cents(self):
        """The sum of every line at its discounted price."""
        return sum(apply_discount(p.price_cents, p.discount_percent) * q for p, q in self.lines)
`;

const TEST_PRICING = `import unittest

from shop.pricing import apply_discount


class ApplyDiscountTests(unittest.TestCase):
    def test_ten_percent_off(self):
        self.assertEqual(apply_discount(1000, 10), 900)

    def test_no_discount_keeps_the_price(self):
        self.assertEqual(apply_discount(1999, 0), 1999)

    def test_full_discount_is_free(self):
        self.assertEqual(apply_discount(1999, 100), 0)

    def test_rejects_a_discount_over_100(self):
        with self.assertRaises(ValueError):
            apply_discount(1000, 120)


if __name__ == "__main__":
    unittest.main()
`;

const TEST_CART = `import unittest

from shop.cart import Cart


class CartTests(unittest.TestCase):
    def test_empty_cart_costs_nothing(self):
        self.assertEqual(Cart().total_cents(), 0)

    def test_total_applies_each_discount(self):
        cart = Cart()
        cart.add("SKU-0001", 2)
        cart.add("SKU-0003")
        self.assertEqual(cart.total_cents(), 2 * 244 + 505)

    def test_rejects_zero_quantity(self):
        with self.assertRaises(ValueError):
            Cart().add("SKU-0001", 0)


if __name__ == "__main__":
    unittest.main()
`;

function catalogSource(products) {
	const rows = products.map(([sku, name, price, discount]) => `    Product("${sku}", "${name}", price_cents=${price}, discount_percent=${discount}),`);
	return `"""The product catalog."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    price_cents: int
    discount_percent: int


PRODUCTS = [
${rows.join("\n")}
]

_BY_SKU = {p.sku: p for p in PRODUCTS}


def find(sku):
    return _BY_SKU[sku]
`;
}

function catalogTests(products) {
	const methods = products.map(
		([sku]) => `    def test_${sku.toLowerCase().replace("-", "_")}_has_a_valid_discount(self):
        product = find("${sku}")
        self.assertGreater(product.price_cents, 0)
        self.assertTrue(0 <= product.discount_percent <= 100)
`,
	);
	return `import unittest

from shop.catalog import find


class CatalogTests(unittest.TestCase):
${methods.join("\n")}

if __name__ == "__main__":
    unittest.main()
`;
}

/** Writes the project into `dir` (which must exist). */
export function createProject(dir) {
	const products = catalog();
	const files = {
		"shop/__init__.py": "",
		"shop/pricing.py": PRICING,
		"shop/cart.py": CART,
		"shop/catalog.py": catalogSource(products),
		"tests/__init__.py": "",
		"tests/test_pricing.py": TEST_PRICING,
		"tests/test_cart.py": TEST_CART,
		"tests/test_catalog.py": catalogTests(products),
		"README.md": "# shop\n\nA tiny shop library. Run the tests with `python3 -m unittest`.\n",
	};
	for (const [name, text] of Object.entries(files)) {
		const file = path.join(dir, name);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(file, text);
	}
	return { files: Object.keys(files) };
}
