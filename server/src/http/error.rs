//! `ApiError`: the one place where failures become HTTP responses with the JSON body
//! `{"error": {"code", "message"}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cellscope_model::api::{ErrorBody, ErrorDetail};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("{message}")]
    NotFound { code: &'static str, message: String },
    #[error("{0}")]
    Unavailable(String),
    /// A request over one of the server's limits (query, headers, body, live subscribers), refused with the
    /// status that names the limit.
    #[error("{message}")]
    Limit {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// Logged once with its details; the client sees only a generic message.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::NotFound {
            code,
            message: message.into(),
        }
    }
}

/// A blocking task that panicked or was cancelled: the request cannot be answered, the server goes on.
impl From<tokio::task::JoinError> for ApiError {
    fn from(error: tokio::task::JoinError) -> Self {
        ApiError::Internal(error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            ApiError::BadRequest { code, message } => (StatusCode::BAD_REQUEST, code, message),
            ApiError::NotFound { code, message } => (StatusCode::NOT_FOUND, code, message),
            ApiError::Unavailable(message) => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
            }
            ApiError::Limit {
                status,
                code,
                message,
            } => (status, code, message),
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal server error".to_string(),
                )
            }
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message,
            },
        };
        (
            status,
            [(axum::http::header::CACHE_CONTROL, "no-cache")],
            Json(body),
        )
            .into_response()
    }
}
