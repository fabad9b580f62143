//! The prices of every model Pi knows, as Pi's model registry gave them when the table was
//! made (`scripts/model-prices.mjs` writes `data/model-prices.json`): replay runs without Pi,
//! and prices each request at the model that answered it.

use std::collections::BTreeMap;

use serde::Deserialize;
use sol_core::savings::ModelPrices;

/// The table bundled with the crate.
const BUNDLED: &str = include_str!("../data/model-prices.json");

/// Each model's prices by `provider/model`, with where the table came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPriceTable {
    /// The Pi version whose model registry the table was read from.
    pub pi: String,
    /// The day it was read (`YYYY-MM-DD`).
    pub generated: String,
    models: BTreeMap<String, ModelPrices>,
}

#[derive(Deserialize)]
struct File {
    pi: String,
    generated: String,
    models: BTreeMap<String, Row>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    input: f64,
    output: f64,
    #[serde(default)]
    cache_read: f64,
    #[serde(default)]
    cache_write: f64,
}

impl ModelPriceTable {
    /// The table bundled with this crate.
    ///
    /// ```
    /// let table = sol_replay::prices::ModelPriceTable::bundled();
    /// let sonnet = table.get("anthropic/claude-sonnet-4-5").expect("a known model");
    /// assert_eq!(sonnet.table().output, 15.0);
    /// assert!(table.get("nobody/no-model").is_none());
    /// ```
    pub fn bundled() -> ModelPriceTable {
        // The file is part of the crate and checked by its tests: it always reads.
        ModelPriceTable::from_json(BUNDLED).unwrap_or_else(|_| ModelPriceTable {
            pi: String::new(),
            generated: String::new(),
            models: BTreeMap::new(),
        })
    }

    /// A table in the bundled file's format.
    pub fn from_json(text: &str) -> Result<ModelPriceTable, serde_json::Error> {
        let file: File = serde_json::from_str(text)?;
        let models = file
            .models
            .into_iter()
            .filter_map(|(key, row)| {
                ModelPrices::from_registry(row.input, row.output, row.cache_read, row.cache_write)
                    .map(|prices| (key, prices))
            })
            .collect();
        Ok(ModelPriceTable {
            pi: file.pi,
            generated: file.generated,
            models,
        })
    }

    /// The prices of the model `key` (`provider/model`), if the table has them.
    pub fn get(&self, key: &str) -> Option<ModelPrices> {
        self.models.get(key).copied()
    }

    /// How many models it prices.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether it prices no model.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }
}
