import Fluent

/// Every migration, in the order it runs. Append only: a migration that has shipped is never
/// edited or reordered; a change to a table is a new `Update<Table><Change>` migration.
enum Migrations {
    static let all: [any Migration] = [
        CreateUsers(),
        CreateSessions(),
        CreateRefreshTokens(),
        CreateLoginFlows(),
        CreateAuditEvents(),
        CreateRateLimitBuckets(),
        CreateTOTPCredentials(),
        CreateBackupCodes(),
        CreateFactorGuards(),
        CreateTrustedDevices(),
        CreateOutboxMessages(),
        CreateOneTimeCodes(),
        UpdateUsersAddCodeFactors(),
        CreateDevices(),
        CreateLookupIndexes(),
        CreateExpiryIndexes(),
        UpdateUsersAddPhoneVerifiedAt(),
        UpdateSessionsAddAddedFactors(),
        CreatePasskeys(),
        UpdateSessionsAddProofs(),
        CreateIdempotentRequests(),
        CreateIdempotentRequestsExpiryIndex(),
        CreateRecoveryRequests(),
        CreateRecoveryRequestsIndexes(),
        UpdateAddSessionEpochs(),
        CreateEmailLinks(),
        CreateEmailLinksIndexes(),
        UpdateUsersAddEmailVerifiedAt(),
        CreatePushApprovals(),
        CreatePhoneChannel(),
        UpdatePushApprovalsAddPurpose(),
    ]
}
