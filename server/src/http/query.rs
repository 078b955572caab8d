//! The query of every `/api/*` request, read by one extractor as its endpoint takes it
//! ([`cellscope_model::query`]): a parameter the endpoint does not take, or a value it cannot use, is refused with
//! the same words on every endpoint before the handler runs.

use super::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use cellscope_model::query::{Endpoint, Query, QueryError};

/// An `/api/*` request's typed query, and its text as sent (the bundle's query is a view's link, which the
/// bundle reads as the app does).
pub struct ApiQuery {
    pub query: Query,
    pub raw: String,
}

/// The answer to a refused query. The compare endpoint names every refusal `bad_parameter`, as it names the
/// choices it cannot compare.
pub fn refused(endpoint: Endpoint, error: &QueryError) -> ApiError {
    let code = match endpoint {
        Endpoint::Compare => "bad_parameter",
        _ => error.code(),
    };
    ApiError::bad_request(code, error.to_string())
}

impl<S: Send + Sync> FromRequestParts<S> for ApiQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let raw = parts.uri.query().unwrap_or_default().to_string();
        let endpoint = Endpoint::of_route(parts.uri.path()).ok_or_else(|| {
            ApiError::Internal(format!("{} reads no typed query", parts.uri.path()))
        })?;
        let query = match endpoint {
            Endpoint::Bundle => Query::DEFAULT,
            _ => Query::parse(&raw, endpoint).map_err(|error| refused(endpoint, &error))?,
        };
        Ok(ApiQuery { query, raw })
    }
}
